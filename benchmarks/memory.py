"""Peak memory of one forward+backward pass of one implementation, in this process.

    python benchmarks/memory.py --impl "d2lutil fused" --batch 1 --length 2048

Prints one JSON line. `run.py` starts one such process per implementation, so no
implementation inherits another's cached or fragmented heap. Two measures, both an
increase over a baseline taken after imports, model and input construction and a
tiny warm-up pass (which starts the thread pools and other lazy state):

* ``rss_peak_mib``: the operating system's view. After the baseline, the kernel's
  resident-set high-water mark (VmHWM) is reset by writing 5 to
  /proc/self/clear_refs; after the pass, VmHWM minus the baseline RSS is the peak
  increase. Exact (no polling), but it counts pages, not tensors: heap pages the
  allocator keeps after a free, thread stacks, and whatever glibc's malloc does.
* ``tensor_peak_mib``: the allocator's view, from torch.profiler(profile_memory=True):
  the running sum of every CPU allocation and free during the pass (including
  buffers a kernel allocates internally), its maximum. Deterministic, and blind to
  fragmentation and to memory malloc keeps but torch has released.
"""

import argparse
import ctypes
import gc
import json
import os
import pathlib
import re
import sys

os.environ.setdefault("KINETO_LOG_LEVEL", "5")

import torch  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import mha_impls  # noqa: E402

MIB = 2.0**20


def _status_kib(field):
    text = pathlib.Path("/proc/self/status").read_text()
    return int(re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE).group(1))


def _trim_heap():
    """Hand freed heap pages back to the OS (glibc), so the baseline RSS is tight."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def reset_rss_peak():
    """Reset VmHWM to the current RSS; False where the kernel does not allow it."""
    before = _status_kib("VmHWM")
    try:
        pathlib.Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return _status_kib("VmHWM") < before or before == _status_kib("VmRSS")


def tensor_peak_bytes(fn):
    """Largest running total of CPU allocations minus frees while ``fn()`` runs."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_ns())
    total = peak = 0
    for event in events:
        total += event.nbytes()
        peak = max(peak, total)
    return peak


def measure(name, batch_size, length, num_hiddens, num_heads, seed=0, masked=False):
    """The two peak measures of one forward+backward; ``masked``: every sequence gets
    valid_lens = 3/4 of the length (torch: the matching ``key_padding_mask``)."""
    impl = mha_impls.build(name, num_hiddens, num_heads, seed=seed)
    valid_lens = torch.full((batch_size,), length * 3 // 4) if masked else None
    impl.module.train()
    gen = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(batch_size, length, num_hiddens, generator=gen).requires_grad_()
    grad_output = torch.randn(batch_size, length, num_hiddens, generator=gen)

    def one_pass(x=x, grad_output=grad_output, valid_lens=valid_lens):
        output, grads = mha_impls.forward_backward(impl, x, grad_output, valid_lens)
        del output, grads
        for module in impl.module.modules():  # drop kept weights once the pass is over
            if hasattr(module, "attention_weights"):
                module.attention_weights = None

    # Warm-up at a tiny size: thread pools, kernels' lazy initialisation.
    one_pass(x[:, :8].detach().requires_grad_(), grad_output[:, :8],
             None if valid_lens is None else valid_lens.clamp(max=8))
    gc.collect()
    _trim_heap()
    baseline_kib = _status_kib("VmRSS")
    reset_ok = reset_rss_peak()
    one_pass()
    rss_peak_kib = _status_kib("VmHWM")
    gc.collect()
    _trim_heap()
    tensor_peak = tensor_peak_bytes(one_pass)
    return {
        "impl": name,
        "shape": [batch_size, length, num_hiddens, num_heads],
        "masked": masked,
        "baseline_rss_mib": baseline_kib / 1024,
        "rss_peak_mib": (rss_peak_kib - baseline_kib) / 1024 if reset_ok else None,
        "tensor_peak_mib": tensor_peak / MIB,
        "threads": torch.get_num_threads(),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", required=True, choices=mha_impls.IMPLS)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--length", type=int, default=2048)
    parser.add_argument("--num-hiddens", type=int, default=256)
    parser.add_argument("--num-heads", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--masked", action="store_true",
                        help="valid_lens = 3/4 of the length (torch: key_padding_mask)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    result = measure(args.impl, args.batch, args.length, args.num_hiddens, args.num_heads,
                     masked=args.masked)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
