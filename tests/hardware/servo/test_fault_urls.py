"""The fault keys of an ``emulated://`` servo bus, any value: a fault, or an error naming the key.

Property tests of :mod:`jointlab.hardware.servo_host.fault_urls` (no bus is started): every
value either gives the faults, supply and ambient it says, or is refused with a
``ConfigurationError`` that names the URL's key; nothing else escapes.
"""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from jointlab.connection import parse_url
from jointlab.errors import ConfigurationError
from jointlab.hardware.servo_host.fault_urls import bus_ambient, bus_faults, bus_supply
from jointlab.hardware.vendors import bus_models
from jointlab.robots import load_robot

SO101 = load_robot("so101")
IDS = list(SO101.bus.ids)
MODELS = bus_models(SO101)[1]

#: Values as a person types them: numbers, colons, commas, stray words.
VALUE = st.one_of(
    st.text(alphabet="0123456789.:-,e", min_size=0, max_size=12),
    st.sampled_from(["nan", "inf", "-inf", "hot", "1:2:3:4", "7:0.5,9:0.1", ""]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
KEYS = [
    "drop_status",
    "corrupt_status",
    "delay_ms",
    "unplug",
    "power_cut",
    "brownout",
    "supply",
    "supply_ohm",
    "ambient",
]


def _read(query: str):
    url = parse_url(f"emulated://so101?{query}")
    return (
        bus_faults(url, IDS, seed=0),
        bus_supply(url, MODELS),
        bus_ambient(url, MODELS),
    )


@given(key=st.sampled_from(KEYS), value=VALUE)
def test_every_value_is_taken_or_refused_naming_its_key(key: str, value: str) -> None:
    try:
        faults, supply, ambient = _read(f"{key}={value}")
    except ConfigurationError as exc:
        assert repr(key) in str(exc), str(exc)
        return
    if key == "ambient":
        assert ambient is not None and math.isfinite(ambient) and -20 <= ambient < 71
    elif key in ("supply", "supply_ohm"):
        assert supply is not None
        assert supply.voltage is None or 4.0 <= supply.voltage <= 14.0  # STS3215's range
        assert math.isfinite(supply.resistance) and 0 <= supply.resistance <= 100
    else:
        assert faults is not None


def test_a_good_query_gives_what_it_says() -> None:
    faults, supply, ambient = _read(
        "drop_status=3:0.5&delay_ms=5&brownout=1:0.5:6&supply=12&supply_ohm=0.2&ambient=40"
    )
    assert faults.drop_status == {3: 0.5} and faults.brownout == (1.0, 0.5, 6.0)
    assert faults.delay_status == 0.005
    assert (supply.voltage, supply.resistance) == (12.0, 0.2)
    assert ambient == 40.0
