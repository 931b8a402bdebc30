"""Where the time of one forward+backward goes, per implementation (torch.profiler).

    python benchmarks/profile_headline.py [--threads 1] [--shape 32 128 256 8] [--iters 5]

Prints, for each implementation, the operators with the most self CPU time, in ms per
forward+backward (mean over --iters passes after 3 warm-up passes). Not part of
`make bench`: a tool for explaining its figures.
"""

import argparse
import logging
import os
import pathlib
import sys

os.environ.setdefault("KINETO_LOG_LEVEL", "5")
logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import mha_impls  # noqa: E402


def op_times(name, shape, iters):
    """{operator: self CPU ms per pass} and the total, for one implementation."""
    batch_size, length, num_hiddens, num_heads = shape
    impl = mha_impls.build(name, num_hiddens, num_heads)
    impl.module.train()
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(batch_size, length, num_hiddens, generator=gen).requires_grad_()
    grad_output = torch.randn(batch_size, length, num_hiddens, generator=gen)
    for _ in range(3):
        mha_impls.forward_backward(impl, x, grad_output)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(iters):
            mha_impls.forward_backward(impl, x, grad_output)
    ops = {e.key: e.self_cpu_time_total / 1e3 / iters for e in prof.key_averages()}
    return ops, sum(ops.values())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--shape", type=int, nargs=4, default=[32, 128, 256, 8])
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--top", type=int, default=6)
    parser.add_argument("--impls", nargs="+", default=["d2lutil fused", mha_impls.REFERENCE],
                        choices=mha_impls.IMPLS, metavar="NAME")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"forward+backward at {tuple(args.shape)}, {args.threads} thread(s), "
          f"self CPU ms per pass (mean of {args.iters})")
    for name in args.impls:
        ops, total = op_times(name, tuple(args.shape), args.iters)
        top = sorted(ops.items(), key=lambda kv: -kv[1])[:args.top]
        print(f"\n{name}: {total:.1f} ms in all")
        for op, ms in top:
            print(f"  {ms:7.1f}  {op}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
