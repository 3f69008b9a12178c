"""Time one step of the public-LSTM blueprint's widest products in float32 and bfloat16 on
one core: an LSTM step (256 -> 256) and the policy's first linear layer (1021 -> 256), at
450 rows (a search's batch of worlds). Says whether bf16 rollouts pay on this CPU.

    OMP_NUM_THREADS=1 python docs/experiments/bf16_products.py
    ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 OMP_NUM_THREADS=1 \\
        python docs/experiments/bf16_products.py
(the second: the same CPU limited to AVX2, as most laptops and desktops are). The question
it answers: pruning_and_precision.md (the search-precision section of
benchmarks/sections.toml runs it).
"""

import argparse
import time

import torch

from lbs_pz.host import machine


def per_call_ms(fn, repeats: int) -> float:
    for _ in range(5):
        fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats * 1e3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=450, help="rows per product (default 450)")
    parser.add_argument("--repeats", type=int, default=50, help="timed calls (default 50)")
    args = parser.parse_args(argv)
    if args.rows < 1 or args.repeats < 1:
        parser.error("--rows and --repeats must be >= 1")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    n = args.rows
    times = {}
    with torch.inference_mode():
        for dtype in (torch.float32, torch.bfloat16):
            lstm = torch.nn.LSTM(256, 256, batch_first=True).to(dtype)
            linear = torch.nn.Linear(1021, 256).to(dtype)
            x, state = torch.randn(n, 1, 256, dtype=dtype), torch.zeros(1, n, 256, dtype=dtype)
            wide = torch.randn(n, 1021, dtype=dtype)
            times["LSTM step", dtype] = per_call_ms(lambda: lstm(x, (state, state)), args.repeats)
            times["linear layer", dtype] = per_call_ms(lambda: linear(wide), args.repeats)
    print(f"{machine()}, one core, {n} rows; ATen CPU capability "
          f"{torch.backends.cpu.get_cpu_capability()}")
    print("| product | float32 ms | bfloat16 ms | bfloat16 / float32 |")
    print("|---|---:|---:|---:|")
    for product in ("LSTM step", "linear layer"):
        f32, b16 = times[product, torch.float32], times[product, torch.bfloat16]
        print(f"| {product} | {f32:.2f} | {b16:.2f} | {b16 / f32:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
