"""Stream the Lorenz attractor chunk by chunk (as the app's live plot does) and save it.

    python examples/lorenz_live.py            # writes lorenz.csv
"""

import numpy as np

import difflab as dl

lorenz = dl.models.get("lorenz")(rho=28.0)
chunks = []
for chunk in dl.stream(lorenz, 50.0, dt=1e-3, n_save=5001, chunk_size=500):
    chunks.append(chunk.ys)
    x, y, z = chunk.ys[-1]
    print(f"{chunk.progress:6.1%}  t = {chunk.ts[-1]:5.1f}  (x, y, z) = ({x:+.2f}, {y:+.2f}, {z:.2f})")

ys = np.concatenate(chunks)
print(f"z ranges over [{ys[:, 2].min():.1f}, {ys[:, 2].max():.1f}] on the attractor")

traj = dl.simulate(lorenz, 50.0, dt=1e-3, n_save=5001)
dl.io.export_csv(traj, "lorenz.csv")
print("saved lorenz.csv")
