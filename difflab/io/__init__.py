"""Files: HDF5 sessions and results (h5py), CSV import and export."""

from ..solvers import set_dataset_maker as _set_dataset_maker
from ..solvers import set_sweep_output as _set_sweep_output
from ._errors import SessionFileError as SessionFileError
from ._export import csv_header as csv_header
from ._export import export_csv as export_csv
from ._export import export_npz as export_npz
from ._export import save_run as save_run
from ._field_files import field_writer as field_writer
from ._field_files import read_fields as read_fields
from ._field_files import save_fields as save_fields
from ._fields import FieldWriter as FieldWriter
from ._fields import add_fields as add_fields
from ._h5 import recover as recover
from ._lock import writing as writing
from ._models import ModelRecord as ModelRecord
from ._observations import Observations as Observations
from ._observations import read_csv as read_csv
from ._observations import read_observations as read_observations
from ._observations import write_observations_csv as write_observations_csv
from ._reader import open_session as open_session
from ._results import add as add
from ._results import save as save
from ._save import remove_stale_temporaries as remove_stale_temporaries
from ._schema import SCHEMA_VERSION as SCHEMA_VERSION
from ._session import Session as Session
from ._session import Stored as Stored
from ._session import keep_in_memory as keep_in_memory
from ._streams import FitWriter as FitWriter
from ._streams import RunWriter as RunWriter
from ._streams import SweepWriter as SweepWriter
from ._sweep_output import open_output as open_sweep_output
from ._writer import SessionWriter as SessionWriter
from ._writer import stream_session as stream_session
from ._writer import write_session as write_session
from ._xarray import to_dataset as _to_dataset

_set_sweep_output(open_sweep_output)  # difflab.sweep(out=...) streams through this package
_set_dataset_maker(_to_dataset)  # every result's to_xarray() reads its group as saved
