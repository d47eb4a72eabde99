"""Make observations.csv: a noisy Lotka-Volterra record to fit (run once; the CSV is shipped).

The "truth" is the built-in model at its default values (alpha=1.1, beta=0.4, gamma=0.4,
delta=0.1, 10 prey and 10 predators at t=0), simulated with RK4 and observed every 0.25
time units from t=0 to t=30 (121 times). Each value gets independent Gaussian noise of
standard deviation 0.5 (NumPy's default_rng, seed 2024), and is rounded to 3 decimals.

    python examples/fit_lotka_volterra/make_observations.py
"""

from pathlib import Path

import numpy as np

import difflab as dl

NOISE = 0.5
SEED = 2024


def main() -> None:
    truth = dl.models.get("lotka_volterra")()
    traj = dl.simulate(truth, 30.0, dt=0.01, n_save=121)
    clean = dl.io.read_observations(traj)
    noisy = clean.with_noise(NOISE, seed=SEED)
    observed = dl.io.Observations(noisy.t, np.round(noisy.y, 3), noisy.states)  # no sigma column
    path = Path(__file__).with_name("observations.csv")
    dl.io.write_observations_csv(path, observed, digits=8)
    print(f"wrote {path} ({len(observed.t)} times of {', '.join(observed.states)})")


if __name__ == "__main__":
    main()
