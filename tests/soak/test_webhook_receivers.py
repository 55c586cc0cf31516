"""The soak's webhook receiver over real HTTP: the engine's own sender posts to it, it journals
each signed request, and the webhooks check passes on the journal."""

from __future__ import annotations

import random
from datetime import timedelta

from devkit.soak.webhook_receivers import Receiver, Slow
from scoreline.webhooks.sender import Sender
from scoreline.webhooks.signing import message_id
from scoreline.webhooks.urls import UrlPolicy
from tests.soak.test_webhook_check import ENDPOINT, FIXTURE, SECRET, _body, _details, _log


async def test_a_receiver_journals_real_signed_posts() -> None:
    receiver = Receiver("slow", Slow(1.0, 0.0, random.Random(3)))
    url = await receiver.start()
    sender = Sender(UrlPolicy(development=True), timedelta(seconds=2), 4)
    log = _log(3)
    try:
        for entry in log:
            msg_id = message_id(ENDPOINT.id, FIXTURE, entry.seq)
            answer = await sender.post(url, msg_id, _body(entry), [SECRET])
            assert answer.delivered
    finally:
        await sender.aclose()
        await receiver.close()
    assert [received.status for received in receiver.journal] == [200, 200, 200]
    assert _details(receiver.journal, log) == []


async def test_a_late_answer_times_the_sender_out_and_is_journaled() -> None:
    receiver = Receiver("slow", Slow(0.5, 1.0, random.Random(4)))
    url = await receiver.start()
    sender = Sender(UrlPolicy(development=True), timedelta(seconds=0.5), 4)
    try:
        entry = _log(1)[0]
        answer = await sender.post(url, message_id(ENDPOINT.id, FIXTURE, 1), _body(entry), [SECRET])
    finally:
        await sender.aclose()
        await receiver.close()
    assert not answer.delivered and answer.error == "timeout"
    assert len(receiver.journal) == 1
