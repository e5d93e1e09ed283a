#!/usr/bin/python3
"""Prints one table from the outputs bench/run_all.sh saved: the SUMMARY lines of bench_step
(step_<build>.txt, one per build), of torch_peer (torch_<variant>[_<n>].txt, merged per variant)
and the RESULT line of bench_alloc (alloc.txt), next to the issue's reference figures.
Usage: summarize.py OUTPUT_DIR
"""
import os
import re
import sys

REFERENCE = {  # the figures quoted in the issue
    "seed_step_us": "126 (PyTorch)",
    "mlp_samples_per_s": "1,150 (PyTorch)",
    "sgemm_mlp_2t": "160 (2T Eigen)",
}


def read_summary(path):
    values = {}
    if not os.path.exists(path):
        return values
    with open(path) as f:
        for line in f:
            if line.startswith("SUMMARY "):
                for key, value in re.findall(r'(\w+)=("[^"]*"|\S+)', line[len("SUMMARY "):]):
                    values[key] = value.strip('"')
    return values


def alloc_result(path):
    if not os.path.exists(path):
        return "not run"
    with open(path) as f:
        for line in f:
            if line.startswith("RESULT "):
                return line.split(":", 1)[1].strip()
    return "no result"


def main():
    out = sys.argv[1]
    builds = []
    for name in sorted(os.listdir(out)):
        m = re.fullmatch(r"step_(.+)\.txt", name)
        if m:
            builds.append((m.group(1), read_summary(os.path.join(out, name))))
    # torch_<variant>[_<anything>].txt, merged per variant: torch_refblas.txt, torch_openblas_1.txt
    peers = {}
    for name in sorted(os.listdir(out)):
        m = re.fullmatch(r"torch_([a-z0-9]+)(_.*)?\.txt", name)
        if m:
            peers.setdefault(m.group(1), {}).update(read_summary(os.path.join(out, name)))
    peer_columns = []
    for variant, values in peers.items():
        for t in (1, 2):
            if f"t{t}_seed_step_us" in values:
                peer_columns.append((f"torch {variant} {t}T", values, t))

    columns = [f"fitbench {b}" for b, _ in builds] + [c[0] for c in peer_columns]
    columns.append("issue ref")

    rows = [
        ("seed train step, 16 rows (us)", "seed_step_us", "seed_step_us"),
        ("seed per step via fit() (us)", "seed_fit_step_us", "seed_fit_step_us"),
        ("seed per step via fit(), DataParallel x2 (us)", "seed_fit_step_us_dp2", None),
        ("MLP 784-512-512-10 Adam b256 (samples/s)", "mlp_samples_per_s", "mlp_samples_per_s"),
        ("MLP DataParallel x2 (samples/s)", "mlp_samples_per_s_dp2", None),
        ("MLP model FLOP rate, 6*params (GF/s)", "mlp_gflops", "mlp_gflops"),
        ("MLP GEMM FLOP rate, FLOPs run (GF/s)", "mlp_gemm_gflops", "mlp_gemm_gflops"),
        ("MLP step's GEMMs alone (samples/s)", "mlp_gemm_only_samples_per_s", None),
        ("SGEMM 256x784x512 1 thread (GF/s)", "sgemm_mlp_1t", None),
        ("SGEMM 256x784x512 2 threads (GF/s)", "sgemm_mlp_2t", None),
        ("SGEMM 1024^3 1 thread (GF/s)", "sgemm_1024_1t", None),
        ("SGEMM 1024^3 2 threads (GF/s)", "sgemm_1024_2t", None),
    ]
    width = max(len(r[0]) for r in rows) + 2
    print(f"{'':<{width}}" + "".join(f"{c:>20}" for c in columns))
    for label, key, torch_key in rows:
        cells = [b.get(key, "-") for _, b in builds]
        for _, values, t in peer_columns:
            cells.append(values.get(f"t{t}_{torch_key}", "-") if torch_key else "-")
        cells.append(REFERENCE.get(key, ""))
        print(f"{label:<{width}}" + "".join(f"{c:>20}" for c in cells))
    print(f"{'compiled for':<{width}}" +
          "".join(f"{b.get('simd', '-'):>20}" for _, b in builds))
    for name, b in builds:  # too wide for a column
        print(f"host of {name}: {b.get('host', '-')}")
    print(f"steady-state heap allocations per training step: "
          f"{alloc_result(os.path.join(out, 'alloc.txt'))}")


if __name__ == "__main__":
    main()
