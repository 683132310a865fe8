#!/usr/bin/env python3
"""The overhead of interleaved paired rounds, with its 95 % interval.

Reads lines "METRIC BASELINE VARIANT" (one round of one metric: the
baseline's value and the variant's, measured seconds apart) on stdin and
prints, per metric, the ratio of the variant's mean to the baseline's with a
95 % confidence interval from a paired bootstrap: rounds are resampled whole,
so a round the machine slowed weighs on both sides alike. Usage:
  ... | bootstrap_ratio.py [RESAMPLES] [SEED]
"""
import random
import sys


def ratio(pairs):
    baseline = sum(b for b, _ in pairs)
    return sum(v for _, v in pairs) / baseline if baseline > 0 else float("nan")


def main():
    resamples = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    rounds = {}
    for number, line in enumerate(sys.stdin, 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 3:
            sys.exit(f"bootstrap_ratio: line {number}: expected METRIC BASELINE VARIANT, got {line.strip()!r}")
        try:
            rounds.setdefault(fields[0], []).append((float(fields[1]), float(fields[2])))
        except ValueError:
            sys.exit(f"bootstrap_ratio: line {number}: not a number in {line.strip()!r}")
    for metric, pairs in rounds.items():
        estimates = sorted(ratio([rng.choice(pairs) for _ in pairs]) for _ in range(resamples))
        low = estimates[int(0.025 * resamples)]
        high = estimates[int(0.975 * resamples) - 1]
        print(f"{metric}: x{ratio(pairs):.4f}, 95 % interval [{low:.4f}, {high:.4f}] "
              f"(width {100 * (high - low):.1f} points, {len(pairs)} rounds)")


if __name__ == "__main__":
    main()
