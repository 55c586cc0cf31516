"""What a partner saw of the feeds, against what the feeds promise: the pure rules behind the
partners check (`api.routes.feeds`, `scoreline.feeds.served`, `scoreline.feeds.content`).

Per partner and document, in the order the answers arrived:
- a 304 comes only when `If-None-Match` held the current ETag, so it carries that same ETag;
- a 200 never carries the ETag the partner sent (a matching ETag is answered 304);
- a 200's ETag names its body's version (a strong tag starts with `"{version}-`);
- the versions a partner holds never go backwards, whichever API process answers.
After the run, each document's last answer (the check's own fetch) is at the newest version
Postgres saved for it (`published_document`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from devkit.soak.model import Violation

CHECK = "partners"


@dataclass(frozen=True)
class Answer:
    """One feed answer: its status, the `If-None-Match` sent, the `ETag` got, and the version it
    leaves the partner holding (the body's for a 200, the held one for a 304)."""

    status: int
    sent_etag: str | None
    etag: str | None
    version: int | None


def etag_version(etag: str) -> int | None:
    """The version a Scoreline ETag names (`"12-ab…"`, `W/` ignored), None if it names none."""
    head = etag.removeprefix("W/").strip('"').split("-", 1)[0]
    return int(head) if head.isdigit() else None


def check_answers(subject: str, answers: Sequence[Answer], final_version: int | None) -> list[Violation]:
    """Every broken promise in one partner's answers for one document (see the module docstring).

    `final_version` is Postgres' newest version of the document; the last answer must leave the
    partner holding it. A document Postgres never published is a violation too: every document a
    partner polls is one of the run's matches or their days, which the builder publishes.
    """
    violations: list[Violation] = []
    held: int | None = None
    for answer in answers:
        problem = _conditional(answer) or _tagged(answer) or _forward(held, answer)
        if problem is not None:
            violations.append(Violation(CHECK, subject, problem))
        if answer.version is not None and (held is None or answer.version > held):
            held = answer.version
    if final_version is None:
        violations.append(Violation(CHECK, subject, "Postgres never published it"))
        return violations
    last = next((answer.version for answer in reversed(answers) if answer.version is not None), None)
    if last != final_version:
        shown = "nothing" if last is None else f"version {last}"
        violations.append(Violation(CHECK, subject, f"ended holding {shown}, Postgres is at {final_version}"))
    return violations


def _conditional(answer: Answer) -> str | None:
    if answer.status == 304 and (answer.sent_etag is None or answer.etag != answer.sent_etag):
        return f"304 with ETag {answer.etag} for If-None-Match {answer.sent_etag}"
    if answer.status == 200 and answer.sent_etag is not None and answer.etag == answer.sent_etag:
        return f"200 with the ETag {answer.etag} it sent: that is a 304"
    return None


def _tagged(answer: Answer) -> str | None:
    if answer.status != 200:
        return None
    named = None if answer.etag is None else etag_version(answer.etag)
    if named is None or named != answer.version:
        return f"ETag {answer.etag} on a body at version {answer.version}"
    return None


def _forward(held: int | None, answer: Answer) -> str | None:
    if held is None or answer.version is None or answer.version >= held:
        return None
    return f"went back from version {held} to {answer.version}"
