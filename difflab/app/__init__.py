"""The Qt-free application model: the Lab, its events, undo, runs, sweeps, fits, trust store."""

from .trust import TrustStore as TrustStore
