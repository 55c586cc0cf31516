"""A phone that lives through several Live Activities for one match, and checks on what it got.

ActivityKit makes a new activity, with its own update token, for every push-to-start. So this
phone's app, like the real one, reports a fresh update token for each start that reaches it, with
the `generation` the start's attributes name (absent: 1), through the device API. What each
activity received is read back from the APNs simulator by its token.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from tests.push import seed
from tests.push.phones import Delivery, Phone, assert_well_formed, deliveries


def generation_of(start: Delivery) -> int:
    return int(start.aps["attributes"].get("generation", 1))


@dataclass
class RenewingPhone(Phone):
    tokens: dict[int, str] = field(default_factory=dict)
    """The update token the app reported for each generation's activity."""
    _renewing: asyncio.Task[None] | None = None

    def run_app_for_each_activity(self, fixture_id: int) -> None:
        """In the background until cancelled: report each new activity's update token at once."""

        async def app() -> None:
            while True:
                for start in await self.starts():
                    generation = generation_of(start)
                    if generation in self.tokens:
                        continue
                    token = seed.apns_token()
                    response = await self.api.put(
                        f"/v1/devices/{self.device_id}/live-activities/{fixture_id}",
                        json={"push_token": token, "generation": generation},
                        headers=self.auth,
                    )
                    assert response.status_code == 200, response.text
                    body = response.json()
                    assert (body["status"], body["generation"]) == ("active", generation), body
                    self.tokens[generation] = token
                await asyncio.sleep(0.02)

        self._renewing = asyncio.create_task(app(), name=f"app-{self.name}")

    async def running(self, generation: int) -> bool:
        """The app reported this generation's token (its failure, if any, is raised)."""
        if self._renewing is not None and self._renewing.done():
            self._renewing.result()
        return generation in self.tokens

    def cancel(self) -> None:
        if self._renewing is not None and not self._renewing.done():
            self._renewing.cancel()

    async def ended(self) -> bool:
        """The newest activity got its end (the run may finish before the drainers sent it)."""
        received = (await self.activities()).get(max(self.tokens, default=0), [])
        return any(d.event == "end" for d in received)

    async def activities(self) -> dict[int, list[Delivery]]:
        """What each generation's activity received, in order."""
        return {generation: await deliveries(self.sim, token) for generation, token in self.tokens.items()}

    async def received_everywhere(self) -> int:
        """How many pushes reached any of the phone's tokens so far."""
        return len(await self.starts()) + sum(
            len(received) for received in (await self.activities()).values()
        )

    async def listed(self, fixture_id: int) -> list[tuple[int, str]]:
        """The device API's (generation, status) of this fixture's activities, as listed."""
        response = await self.api.get(f"/v1/devices/{self.device_id}/live-activities", headers=self.auth)
        assert response.status_code == 200, response.text
        return [
            (row["generation"], row["status"])
            for row in response.json()["live_activities"]
            if row["fixture_id"] == fixture_id
        ]


def assert_generations(
    starts: Sequence[Delivery], activities: dict[int, list[Delivery]], topic: str
) -> list[Delivery]:
    """Generations 1, 2, … each started once, in order; each activity got its pushes and then one
    `end`, last (nothing reached it after its end); the next generation's start came after the end
    of the one before. Returns every delivery in arrival order."""
    assert [s.event for s in starts] == ["start"] * len(starts)
    assert [generation_of(s) for s in starts] == list(range(1, len(starts) + 1))
    assert sorted(activities) == [generation_of(s) for s in starts], "an activity's token was never reported"
    for start in starts:
        assert_well_formed(start, topic)
        assert start.priority == 10 and start.alerting
        assert start.aps["input-push-token"] == 1
    ends: list[Delivery] = []
    for generation, received in sorted(activities.items()):
        events = [d.event for d in received]
        assert events and events[-1] == "end" and events.count("end") == 1, (generation, events)
        assert set(events[:-1]) <= {"update"}, (generation, events)
        for delivery in received:
            assert_well_formed(delivery, topic)
        ends.append(received[-1])
    for end, following in zip(ends, starts[1:], strict=False):
        assert end.seq < following.seq, "a generation started before the one before it ended"
        assert end.state["version"] <= following.state["version"]
    chain = sorted([*starts, *(d for received in activities.values() for d in received)], key=lambda d: d.seq)
    versions = [d.state["version"] for d in chain]
    assert versions == sorted(versions), f"content-state version went back: {versions}"
    stamps = [d.aps["timestamp"] for d in chain]
    assert stamps == sorted(stamps), f"aps.timestamp went back: {stamps}"
    return chain
