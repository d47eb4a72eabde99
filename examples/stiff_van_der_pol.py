"""A stiff problem: Van der Pol at mu = 1000, solved by the implicit Kvaerno5.

    python examples/stiff_van_der_pol.py
"""

import numpy as np

import difflab as dl

vdp = dl.models.get("van_der_pol")(mu=1000.0)
traj = dl.simulate(vdp, 5000.0, solver="kvaerno5", rtol=1e-6, atol=1e-8, n_save=5001)
x = np.asarray(traj["x"])
print(f"{int(traj.steps)} adaptive steps, {traj.wall_time:.2f} s, {traj.message}")
print(f"amplitude {np.abs(x).max():.3f} (limit cycle: about 2)")
up = np.nonzero((x[:-1] < 0) & (x[1:] >= 0))[0]
period = np.diff(np.asarray(traj.ts)[up]).mean()
print(f"period {period:.0f} (relaxation theory: (3 - 2 ln 2) mu = {(3 - 2 * np.log(2)) * 1000:.0f})")
