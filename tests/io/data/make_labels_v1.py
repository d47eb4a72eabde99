"""Writes labels_v1.h5: a session whose labels are 1-D fixed-length strings.

That is how DiffLab wrote ``state`` and ``parameter`` up to commit 2bc9823; run this with
that version on the path (``git archive 2bc9823 difflab | tar -x -C old``, then
``PYTHONPATH=old python make_labels_v1.py labels_v1.h5``).
"""

import sys

import numpy as np

import difflab as dl

sir = dl.models.get("sir")()
traj = dl.simulate(sir, 1.0, n_save=3)
ts, ys = np.asarray(traj.ts), np.asarray(traj.ys)
with dl.io.write_session(sys.argv[1], command_line="make_labels_v1.py") as s:
    s.add_run(traj, model=sir, settings=dict(t1=1.0, n_save=3))
    w = s.new_sweep(model=sir, parameter_names=["beta", "gamma"],
                    values=np.array([[0.3, 0.1], [0.4, 0.1]]), time=ts, chunk_size=2,
                    settings=dict(t1=1.0, n_save=3))
    w.write_chunk(0, ys=np.stack([ys, ys]), result=[0, 0], steps=[5, 5])
    w.finish()
    s.add_fit(model=sir, parameter_names=["beta"], loss=[2.0, 1.0], parameters=[[0.2], [0.3]],
              data=dict(time=ts, y=ys[:, 1:], state_names=["I", "R"]), optimizer="adam")
    s.add_sensitivity(model=sir, parameter_names=["beta", "gamma"], gradient=[1.0, -2.0],
                      dy_dp=np.ones((3, 3, 2)), time=ts, state_names=["S", "I", "R"])
