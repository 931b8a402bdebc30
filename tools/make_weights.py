"""Make the trained weights that ship with d2lutil: notebook 8's translator for seeds 0-5.

    .venv/bin/python tools/make_weights.py            # seeds 0 to 5, into d2lutil/weights/
    .venv/bin/python tools/make_weights.py --seeds 0 1

For each seed s it runs notebook 8's data and training with every seed s
(``d2lutil.translator.make_weights``: ``split_words(..., seed=s)``, then
``train(..., seed=s)`` on one thread, about half a minute a seed) and writes
``seed_<s>.pt`` and ``weights.json`` (each file's data fingerprint, test words and
training losses, and ``translator.machine()``: the torch version, CPU capability, CPU
vendor and model, and BLAS and oneDNN versions that made them).
``d2lutil.translator.trained`` loads them; a model trained on another machine (another
CPU model, torch or library version) differs in its last digits, so remake them all
together on one machine and run ``make execute`` for notebooks 8 and 9 afterwards.
"""

import argparse
import time

from d2lutil import translator


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(translator.SHIPPED_SEEDS))
    parser.add_argument("--folder", default=str(translator.WEIGHTS),
                        help="where to write them (default: d2lutil/weights/)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    path = translator.make_weights(args.seeds, args.folder)
    print(f"seeds {args.seeds}: {path} ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
