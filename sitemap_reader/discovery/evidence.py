"""What a job keeps of an answer that was not the sitemap or robots.txt it asked for, so
that the end of the job can say whether bot protection answered instead
(:mod:`~sitemap_reader.discovery.blocks`).

A job keeps the headers of every response and the first :data:`~blocks.BODY_BYTES` of its
body; a refusal's body (a 403 challenge page, a 503 block page) is read that far only for
this. At the job's end, :func:`judge` names the block on the node (``node.block`` and a
``blocked-by`` problem) when the node did not give what it was asked for: a status that
is not 2xx, a body that is not a sitemap, or an answer from another URL than the one
asked (a redirect to a login page). A good answer is never judged.
"""

from __future__ import annotations

from collections.abc import Mapping

from sitemap_reader.discovery.blocks import BODY_BYTES, REFUSALS, find_block, joined
from sitemap_reader.discovery.job import Job


def heard(job: Job, status: int, fields: Mapping[str, str]) -> bool:
    """A response's head: its headers kept; True when its body is read only as evidence
    (a refusal: what answered may be bot protection)."""
    job.heard = joined(fields)
    job.evidence = bytearray()
    return status in REFUSALS


def gather(job: Job, chunk: bytes) -> bool:
    """Keep the body's first bytes; True while more are wanted."""
    evidence = job.evidence
    if evidence is None or len(evidence) >= BODY_BYTES:
        return False
    evidence += chunk[: BODY_BYTES - len(evidence)]
    return len(evidence) < BODY_BYTES


def judge(job: Job) -> None:
    """At the job's end: the bot protection that answered instead, named on the node."""
    node, heard_ = job.node, job.heard
    evidence, job.evidence, job.heard = job.evidence, None, None
    if heard_ is None or node.block is not None:
        return
    status = node.status or 0
    answered = 200 <= status < 300 and node.format not in (None, "unknown")
    moved = node.final_url is not None and node.final_url != node.url
    if answered and not moved:
        return
    found = find_block(
        node.status, heard_, bytes(evidence or b""), asked=node.url, final=node.final_url
    )
    if found is not None:
        node.block = found
        node.add_problem("blocked-by", f"{found.words} answered: {', '.join(found.signals)}")
