"""Debian's Chromium under Playwright, and the desk and console pages as a scorer uses them.

Playwright's own browser download is not reachable here, so it drives the distribution's build
(`make browser-tools` installs it) through `executable_path`; `SCORELINE_CHROMIUM` names another
binary. Each desk is its own browser context: its own IndexedDB and localStorage, like a device.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Locator, Page, expect

CHROMIUM = Path(os.environ.get("SCORELINE_CHROMIUM", "/usr/bin/chromium"))
LAPTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
SCREENSHOTS = Path(
    os.environ.get(
        "SCORELINE_SCREENSHOTS", Path(__file__).resolve().parents[2] / ".scoreline" / "screenshots"
    )
)
"""Where the tests save their screenshots: `.scoreline/screenshots/` (not committed) unless
`SCORELINE_SCREENSHOTS` says otherwise; `SCORELINE_SCREENSHOTS=docs/screenshots` refreshes the
README's pictures."""
TIMEOUT_MS = 20_000


@dataclass
class Screen:
    """One page of one browser context, with the console errors it logged (a test fails on any)."""

    context: BrowserContext
    page: Page
    errors: list[str] = field(default_factory=list)

    @classmethod
    async def open(
        cls, browser: Browser, *, viewport: dict[str, int] = LAPTOP, mobile: bool = False
    ) -> Screen:
        context = await browser.new_context(
            viewport=viewport, is_mobile=mobile, has_touch=mobile, device_scale_factor=1
        )
        context.set_default_timeout(TIMEOUT_MS)
        page = await context.new_page()
        screen = cls(context, page)
        page.on("console", screen._console)
        page.on("pageerror", lambda error: screen.errors.append(f"pageerror: {error}"))
        return screen

    def _console(self, message: ConsoleMessage) -> None:
        # A failed fetch while the test cuts the network is the point of the test, not a bug.
        if (
            message.type == "error"
            and "net::ERR" not in message.text
            and "Failed to load" not in message.text
        ):
            self.errors.append(message.text)

    async def close(self) -> None:
        await self.context.close()

    async def screenshot(self, name: str) -> None:
        """Save the whole page as `<SCREENSHOTS>/<name>.png`."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=True, animations="disabled")


class DeskScreen(Screen):
    """The scorer desk of one fixture."""

    async def sign_in(self, base_url: str, fixture_id: int, token: str) -> None:
        await self.page.goto(f"{base_url}/desk/{fixture_id}")
        await self.page.get_by_label("Desk token").fill(token)
        await self.page.get_by_role("button", name="Sign in").click()
        await expect(self.page.locator("#app")).to_be_visible()
        await expect(self.page.locator("#connection")).to_have_attribute("data-state", "live")

    def button(self, name: str, side: str | None = None) -> object:
        scope = self.page.locator(f".team-pad.{side}") if side else self.page.locator("#pad")
        return scope.get_by_role("button", name=name, exact=True)

    async def tap(self, name: str, side: str | None = None) -> None:
        scope = self.page.locator(f".team-pad.{side}") if side else self.page.locator("#pad")
        await scope.get_by_role("button", name=name, exact=True).click()

    async def choose(self, legend: str, option: str) -> None:
        """Pick `option` in the open dialog's group labelled `legend`."""
        title = self.page.locator("legend", has_text=re.compile(f"^{re.escape(legend)}$"))
        group = self.page.locator("#form-dialog fieldset", has=title)
        await group.get_by_role("button", name=option, exact=True).click()

    async def save(self) -> None:
        await self.page.locator("#form-dialog").get_by_role("button", name="Save").click()

    async def score(self) -> str:
        home = await self.page.locator("#home-score").text_content()
        away = await self.page.locator("#away-score").text_content()
        return f"{home}-{away}"

    async def expect_score(self, home: int, away: int) -> None:
        await expect(self.page.locator("#home-score")).to_have_text(str(home))
        await expect(self.page.locator("#away-score")).to_have_text(str(away))

    async def expect_version(self, version: int, *, within_s: float = 5) -> None:
        await expect(self.page.locator("#match-version")).to_have_text(f"v{version}", timeout=within_s * 1000)

    async def waiting(self) -> int:
        return int(await self.page.locator("#banner").get_attribute("data-waiting") or 0)

    async def logged_texts(self) -> list[str]:
        """The log's entries (not the pending taps), oldest first."""
        rows = self.page.locator("#log li[data-seq] .log-text")
        return list(reversed(await rows.all_text_contents()))


OUTBOX_RECORDS = """async (fixture) => {
  const db = await new Promise((resolve, reject) => {
    const open = indexedDB.open("scoreline-desk");
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  const all = await new Promise((resolve, reject) => {
    const request = db.transaction("outbox").objectStore("outbox").getAll();
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  db.close();
  return all.filter((r) => r.fixture === fixture).sort((a, b) => a.order - b.order);
}"""
"""Reads the desk's outbox straight from IndexedDB, oldest tap first."""


async def outbox(screen: Screen, fixture_id: int) -> list[dict[str, object]]:
    records: list[dict[str, object]] = await screen.page.evaluate(OUTBOX_RECORDS, fixture_id)
    return records


class ConsoleScreen(Screen):
    """The operator console."""

    async def sign_in(self, base_url: str, token: str) -> None:
        await self.page.goto(f"{base_url}/console")
        await self.page.get_by_label("Operator token").fill(token)
        await self.page.get_by_role("button", name="Sign in").click()
        await expect(self.page.locator("#app")).to_be_visible()

    def row(self, fixture_id: int) -> Locator:
        return self.page.locator(f"#matches tr[data-fixture='{fixture_id}']")

    def detail(self, fixture_id: int) -> Locator:
        return self.page.locator(f"#detail-{fixture_id}")
