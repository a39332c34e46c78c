"""SROIE vendors: the source unit of docval's dev/test split (issue 29).

A receipt's vendor is its key field ``company``, normalised so that one chain or one shop is one
source however its key spells it (``vendor_of``):

1. upper-cased;
2. bracketed parts dropped (a branch or state: "MR D.I.Y. (JOHOR) SDN BHD" and
   "MR. D.I.Y. (M) SDN BHD" are one vendor);
3. dots deleted ("D.I.Y." -> "DIY", "SDN. BHD." -> "SDN BHD"), every other character but
   letters, digits, "&" and "/" turned into a space, runs of spaces collapsed;
4. ``VENDOR_ALIASES``: a misspelt key mapped to the name printed on its receipt (SROIE's key
   for receipt 026 reads "TED HENG", its header "TEO HENG").

An empty company field has no vendor: the receipt is its own source (``"receipt <id>"``).
The frozen split is ``tasks/docval/splits.yaml`` (`harness.splits`); a vendor it does not name
(receipts the project never saw) is placed by the stable hash rule there.
"""

from __future__ import annotations

import re

from harness.splits import SourceSplit, load_source_split

__all__ = ["VENDOR_ALIASES", "docval_split", "vendor_of"]

#: misspelt SROIE keys -> the vendor name printed on the receipt itself
VENDOR_ALIASES: dict[str, str] = {"TED HENG STATIONERY & BOOKS": "TEO HENG STATIONERY & BOOKS"}

_BRACKETED = re.compile(r"\([^)]*\)")
_OTHER = re.compile(r"[^A-Z0-9&/ ]")
_SPACES = re.compile(r"\s+")


def vendor_of(company: str, doc_id: str = "") -> str:
    """The vendor (split source) of a receipt whose ``company`` key is ``company``."""
    name = _BRACKETED.sub(" ", company.upper()).replace(".", "")
    name = _SPACES.sub(" ", _OTHER.sub(" ", name)).strip()
    if not name:
        return f"receipt {doc_id}"
    return VENDOR_ALIASES.get(name, name)


def docval_split() -> SourceSplit:
    """docval's frozen vendor split (``tasks/docval/splits.yaml``)."""
    return load_source_split("docval")
