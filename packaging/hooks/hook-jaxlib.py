# jaxlib: the XLA runtime (.so files), its MLIR modules and the CPU plugin, all loaded
# dynamically, and its package metadata (JAX checks versions through it).
from PyInstaller.utils.hooks import collect_data_files, collect_dynamic_libs, collect_submodules, copy_metadata

hiddenimports = collect_submodules("jaxlib")
binaries = collect_dynamic_libs("jaxlib")
datas = collect_data_files("jaxlib") + copy_metadata("jaxlib")
