"""Files: HDF5 sessions and results (h5py), CSV import and export."""

from ._export import write_csv as write_csv
from ._export import write_run_h5 as write_run_h5
