"""Month splitting never falls back silently to a fixed offset."""

from __future__ import annotations

import pytest

from instances.months import month_timezone


def test_an_unknown_zone_name_is_an_error_not_a_fixed_offset():
    with pytest.raises(ValueError, match="Mars/Olympus_Mons.*zoneinfo"):
        month_timezone({"TimeZoneString": "Mars/Olympus_Mons", "TimeZone": 3600})
    assert str(month_timezone({"TimeZoneString": "Europe/Stockholm"})) == "Europe/Stockholm"
    assert month_timezone({"TimeZone": 3600}).utcoffset(None).total_seconds() == 3600
