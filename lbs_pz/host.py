"""The machine this process runs on, as timings name it: the CPU model and the instruction
sets that most change the nets' speed. A game log records it with each game, and the
benchmark sections with each run, so that two timings are compared only when one machine
made both. Below every layer: any module may import it, and it imports nothing of lbs_pz.

    machine()     # e.g. 'Intel(R) Xeon(R) Processor (avx512_bf16, amx_bf16)'
"""

from __future__ import annotations

import functools
import platform

MACHINE_CHARS = 200                # the longest machine name a log line may hold


@functools.lru_cache(maxsize=1)
def machine() -> str:
    """The CPU this process runs on: its model name and which of avx512_bf16, amx_bf16 and
    sve it has (one model name can hide a CPU with AMX and one without, and the nets run
    several times faster with it), at most `MACHINE_CHARS` characters. Timings from two
    machines are not comparable: the paper's Table 1 says when a speed-up mixes them."""
    name, flags = platform.processor() or platform.machine() or "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                field, _, value = line.partition(":")
                if field.strip() == "model name":
                    name = value.strip() or name
                elif field.strip() in ("flags", "Features"):
                    flags = set(value.split())
                    break
    except OSError:
        pass
    sets = [s for s in ("avx512_bf16", "amx_bf16", "sve") if s in flags]
    return (name + (f" ({', '.join(sets)})" if sets else ""))[:MACHINE_CHARS]
