"""Tap → other screen, measured inside the two pages: from the Save click on desk A (the tap is
then written to the outbox and sent) to the moment desk B's scoreboard shows the new score.

Both stamps are `performance.timeOrigin + performance.now()` in pages of one browser on one
machine, so they share a clock, and nothing of Playwright's own round trips is counted.
"""

from __future__ import annotations

from tests.web.browser import DeskScreen

WATCH_SCORE = """(side) => {
  window.__scoreSeen = new Promise((resolve) => {
    const digits = document.getElementById(`${side}-score`);
    const observer = new MutationObserver(() => {
      observer.disconnect();
      resolve(performance.timeOrigin + performance.now());
    });
    observer.observe(digits, { childList: true, characterData: true, subtree: true });
  });
}"""
STAMP_SAVE = """() => {
  const save = document.querySelector("#form-dialog [data-action=save]");
  save.addEventListener("click", () => { window.__savedAt = performance.timeOrigin + performance.now(); },
    { capture: true, once: true });
}"""


async def goal_to_other_screen(a: DeskScreen, b: DeskScreen, side: str, scorer: str) -> float:
    """Tap a goal for `side` on `a`; seconds until `b`'s scoreboard shows it."""
    await b.page.evaluate(WATCH_SCORE, side)
    await a.tap("Goal", side)
    await a.choose("Scorer", scorer)
    await a.page.evaluate(STAMP_SAVE)
    await a.save()
    seen: float = await b.page.evaluate("window.__scoreSeen")
    saved: float = await a.page.evaluate("window.__savedAt")
    return (seen - saved) / 1000
