"""A digest message as the data plane hands it to the control plane."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True, frozen=True)
class Digest:
    """One digest message (v1model `digest`): the learn list and the field values, in order."""

    learn_id: int
    name: str
    values: tuple[int, ...]
