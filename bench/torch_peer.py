#!/usr/bin/python3
"""PyTorch eager peer of bench_step: the same two workloads on 1 and 2 intra-op threads.

(a) the seed model (Linear(4, 1) + sigmoid, BCE, SGD lr 0.2): time per training step
    (zero_grad, forward, loss, backward, optimizer step) on a fixed 16-row batch, and per step
    of a fit()-like loop (shuffled epoch of 128 samples in batches of 16, loss and accuracy
    accumulated);
(b) a 784-512-512-10 MLP (relu, relu, softmax as logits + CrossEntropyLoss; Adam; batch 256;
    4096 synthetic samples): samples/s over shuffled epochs, and its FLOP rate at 6*params per
    sample.

With --cnn, instead: (c) resources/examples/fashion_mnist_cnn.json's network (Conv2D 16 3x3 relu,
    MaxPool 2, Conv2D 32 3x3 relu, MaxPool 2, Linear 800-128 relu, Linear 128-10; Adam, batch 32;
    4096 synthetic 28 x 28 images), channels-last as fitbench holds them: samples/s over shuffled
    epochs, the peer of bench_conv (a).

Medians of >= 5 repeats. Run with /usr/bin/python3 (Debian's python3-torch).
Debian's python3-torch is built with BLAS_INFO=generic: its GEMMs go to whatever libblas.so.3
the system provides (the netlib reference BLAS unless OpenBLAS is installed). To measure it with
OpenBLAS without changing the system, extract libopenblas0-pthread and run with
LD_LIBRARY_PATH=<dir with its libblas.so.3> OPENBLAS_NUM_THREADS=<threads> (bench/run_all.sh
--openblas does this). The BLAS in use is printed.
Usage: torch_peer.py [--repeats N] [--threads 1,2] [--cnn]
"""
import argparse
import os
import statistics
import time

import numpy as np
import torch


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def blas_in_use():
    """The BLAS library this process has loaded (Debian's torch calls whatever libblas.so.3 is)."""
    torch.ones(64, 64) @ torch.ones(64, 64)
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    return ", ".join(sorted(paths)) or "none found"


def time_per_iteration(body, repeats, min_seconds):
    """Grows the iteration count until body(n) takes min_seconds, then the median per iteration."""
    n = 1
    while True:
        t0 = time.perf_counter()
        body(n)
        t = time.perf_counter() - t0
        if t >= min_seconds:
            break
        n = max(n * 2, int(n * min_seconds / t * 1.2)) if t > 0 else n * 10
    per = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        body(n)
        per.append((time.perf_counter() - t0) / n)
    return statistics.median(per)


def seed_data():
    # The same data as fitbench's "seed" generator: np.random.default_rng(7).normal(size=(128, 4)).
    x = np.random.default_rng(7).normal(size=(128, 4)).astype(np.float32)
    y = (x[:, :1] > 0).astype(np.float32)
    return torch.from_numpy(x), torch.from_numpy(y)


def bench_seed(repeats):
    torch.manual_seed(7)
    x, y = seed_data()
    model = torch.nn.Sequential(torch.nn.Linear(4, 1), torch.nn.Sigmoid())
    loss_fn = torch.nn.BCELoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    xb, yb = x[:16].contiguous(), y[:16].contiguous()

    def steps(n):
        for _ in range(n):
            opt.zero_grad(set_to_none=False)
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()

    step_us = 1e6 * time_per_iteration(steps, repeats, 0.3)

    def epochs(n):
        for _ in range(n):
            perm = torch.randperm(128)
            loss_sum = torch.zeros(())
            correct = torch.zeros(())
            for start in range(0, 128, 16):
                idx = perm[start:start + 16]
                bx, by = x[idx], y[idx]
                opt.zero_grad(set_to_none=False)
                p = model(bx)
                loss = loss_fn(p, by)
                loss.backward()
                opt.step()
                with torch.no_grad():
                    loss_sum += loss.detach() * 16
                    correct += ((p > 0.5).float() == by).sum()
            _ = (loss_sum / 128).item(), (correct / 128).item()

    fit_step_us = 1e6 * time_per_iteration(epochs, repeats, 0.3) / 8
    return step_us, fit_step_us


def classifier_samples_per_s(model, x, y, batch, repeats):
    """Adam (Keras's epsilon) and cross-entropy on logits over shuffled epochs of (x, y), loss and
    accuracy accumulated as fit() does: the median samples/s of `repeats` epochs after a warm-up
    one (Adam's state, the allocator's caches)."""
    samples = x.shape[0]
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)

    def epoch():
        perm = torch.randperm(samples)
        loss_sum = torch.zeros(())
        correct = torch.zeros(())
        for start in range(0, samples, batch):
            idx = perm[start:start + batch]
            bx, by = x[idx], y[idx]
            opt.zero_grad(set_to_none=False)
            logits = model(bx)
            loss = loss_fn(logits, by)
            loss.backward()
            opt.step()
            with torch.no_grad():
                loss_sum += loss.detach() * by.shape[0]
                correct += (logits.argmax(1) == by).sum()
        _ = (loss_sum / samples).item(), (correct / samples).item()

    epoch()
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        epoch()
        rates.append(samples / (time.perf_counter() - t0))
    return statistics.median(rates)


def bench_mlp(repeats, samples=4096, batch=256):
    torch.manual_seed(7)
    g = torch.Generator().manual_seed(21)
    x = torch.rand(samples, 784, generator=g) * 2 - 1
    y = torch.randint(0, 10, (samples,), generator=g)
    model = torch.nn.Sequential(
        torch.nn.Linear(784, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 10))
    rate = classifier_samples_per_s(model, x, y, batch, repeats)
    params = sum(p.numel() for p in model.parameters())
    # The GEMMs a step runs: forward, weight gradient, and input gradient except for the first
    # layer (x does not require grad).
    gemm = 4.0 * 784 * 512 + 6.0 * 512 * 512 + 6.0 * 512 * 10
    return rate, 6.0 * params, gemm


def bench_cnn(repeats, samples=4096, batch=32):
    torch.manual_seed(1)
    g = torch.Generator().manual_seed(31)
    x = torch.rand(samples, 1, 28, 28, generator=g).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (samples,), generator=g)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(800, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    model = model.to(memory_format=torch.channels_last)
    return classifier_samples_per_s(model, x, y, batch, repeats)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--cnn", action="store_true")
    args = ap.parse_args()
    repeats = max(5, args.repeats)
    print(f"torch_peer: torch {torch.__version__}, mkldnn {torch.backends.mkldnn.is_available()}, "
          f"{os.cpu_count()} cpus, {repeats} repeats (medians), load avg {load_average()}")
    print(f"BLAS: {blas_in_use()}; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    rows = []
    summary = []
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        if args.cnn:
            sps = bench_cnn(repeats)
            rows.append((f"(c) fashion_mnist_cnn Adam batch 32, {threads} thread(s)",
                         f"{sps:9.0f} samp/s"))
            summary.append(f"t{threads}_cnn_samples_per_s={sps:.0f}")
            continue
        step_us, fit_step_us = bench_seed(repeats)
        sps, flops_per_sample, gemm_per_sample = bench_mlp(repeats)
        gflops = sps * flops_per_sample * 1e-9
        gemm_gflops = sps * gemm_per_sample * 1e-9
        rows += [
            (f"(a) seed train step, 16 rows, {threads} thread(s)", f"{step_us:11.2f} us"),
            (f"(a) seed fit-like loop per step, {threads} thread(s)", f"{fit_step_us:11.2f} us"),
            (f"(b) MLP Adam batch 256, {threads} thread(s)", f"{sps:9.0f} samp/s"),
            (f"(b) MLP model FLOP rate (6*params), {threads} thread(s)", f"{gflops:11.1f} GF/s"),
            (f"(b) MLP GEMM FLOP rate (FLOPs run), {threads} thread(s)",
             f"{gemm_gflops:11.1f} GF/s"),
        ]
        summary.append(f"t{threads}_seed_step_us={step_us:.2f} t{threads}_seed_fit_step_us="
                       f"{fit_step_us:.2f} t{threads}_mlp_samples_per_s={sps:.0f} "
                       f"t{threads}_mlp_gflops={gflops:.1f} t{threads}_mlp_gemm_gflops={gemm_gflops:.1f}")
    print(f"\n{'measurement':<52} {'median':>14}")
    for name, value in rows:
        print(f"{name:<52} {value}")
    print(f"load avg at end: {load_average()}")
    print("SUMMARY " + " ".join(summary))


if __name__ == "__main__":
    main()
