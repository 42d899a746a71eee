"""memlab's --sizes grammar (src/harness/sizes.hpp), so that `memlab-peers --sizes 2^12..2^31` means
what `memlab run --sizes 2^12..2^31` means: the rules below, with the suffixes and limits from memlab's table
(memlab_tools/table.py: `memlab list --format json`, "sizes").

  item   := value | value ".." value [":" step]
  value  := number [suffix] | "2^" number [suffix]
  suffix := K | M | G (elements, x1024) | B | KiB | MiB | GiB (bytes, converted by the dtype's size)
  step   := "*" number (geometric, default *2) | "+" number (arithmetic)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from . import table

_SUFFIX = {s["suffix"]: (s["multiplies_by"], s["bytes"]) for s in table.sizes()["suffixes"]}
MAX_VALUES = table.sizes()["max_range_items"]  # a range that lists more is a typo (1..2^40:+1), not a sweep
MAX_EXPONENT = table.sizes()["max_exponent"]
_VALUE = re.compile(r"^(2\^)?(\d+)([A-Za-z]*)$")


@dataclass(frozen=True)
class Size:
    value: int
    is_bytes: bool
    text: str

    def elements(self, elem_size: int, flag: str = "--sizes") -> int:
        if not self.is_bytes:
            return self.value
        if self.value % elem_size:
            raise ValueError(f'{flag}: "{self.text}" ({self.value} bytes) is not a multiple of the element size '
                             f'({elem_size})')
        return self.value // elem_size


def _value(text: str, flag: str) -> tuple[int, bool]:
    m = _VALUE.match(text.strip())
    if not m or m.group(3) not in _SUFFIX:
        raise ValueError(f'{flag}: invalid value "{text}": N or 2^k, optionally K|M|G (elements) or B|KiB|MiB|GiB '
                         '(bytes)')
    if m.group(1) and int(m.group(2)) > MAX_EXPONENT:
        raise ValueError(f'{flag}: "{text}": 2^k takes k <= {MAX_EXPONENT}')
    base = 1 << int(m.group(2)) if m.group(1) else int(m.group(2))
    unit, is_bytes = _SUFFIX[m.group(3)]
    return base * unit, is_bytes


def parse_sizes(text: str, default_geometric: bool = True, flag: str = "--sizes") -> list[Size]:
    """The sizes `text` lists; ValueError naming `flag` (the option it came from) when it is not the grammar."""
    if not text.strip():
        raise ValueError(f"{flag}: an empty value")
    out: list[Size] = []
    for item in (i.strip() for i in text.split(",")):
        if not item:
            raise ValueError(f'{flag}: empty item in "{text}"')
        if ".." not in item:
            v, b = _value(item, flag)
            out.append(Size(v, b, item))
            continue
        lo_text, rest = item.split("..", 1)
        hi_text, _, step = rest.partition(":")
        lo, lb = _value(lo_text, flag)
        hi, hb = _value(hi_text, flag)
        if lb != hb:
            raise ValueError(f'{flag}: "{item}": both ends count elements, or both bytes')
        if lo > hi:
            raise ValueError(f'{flag}: "{item}": the start is greater than the end')
        geometric, factor = default_geometric, 2 if default_geometric else 1
        if step:
            if step.startswith("*"):
                if not step[1:].isdigit():
                    raise ValueError(f'{flag}: "{item}": a geometric step is :*factor, a whole number')
                geometric, factor = True, int(step[1:])
                if factor < 2:
                    raise ValueError(f'{flag}: "{item}": a geometric step is at least *2')
            elif step.startswith("+"):
                geometric, factor = False, _value(step[1:], flag)[0]
                if factor == 0:
                    raise ValueError(f'{flag}: "{item}": the step must not be zero')
            else:
                raise ValueError(f'{flag}: "{item}": a step is :*factor or :+increment')
        if geometric and lo == 0:
            raise ValueError(f'{flag}: "{item}": a geometric range cannot start at 0')
        count = (math.floor(math.log(hi / lo, factor) + 1e-9) + 1) if geometric else (hi - lo) // factor + 1
        if count > MAX_VALUES:
            raise ValueError(f'{flag}: "{item}": the range has more than {MAX_VALUES} values')
        v = lo
        while v <= hi:
            pow2 = v & (v - 1) == 0 and v >= 1024
            out.append(Size(v, lb, f"2^{v.bit_length() - 1}" if pow2 else str(v)))
            v = v * factor if geometric else v + factor
    return out


def parse_counts(text: str, flag: str) -> list[int]:
    """Plain numbers, ranges counting up by 1 by default: "0", "0,2,8", "0..15", "1..16:*2"."""
    sizes = parse_sizes(text, default_geometric=False, flag=flag)
    if any(s.is_bytes for s in sizes):
        raise ValueError(f"{flag}: a plain count takes no unit")
    return [s.value for s in sizes]
