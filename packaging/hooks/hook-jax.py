# jax: submodules imported on demand, the metadata it reads to discover backend plugins
# (entry-point group "jax_plugins"), and its sources, which tracebacks and tracing read.
from PyInstaller.utils.hooks import collect_submodules, copy_metadata

hiddenimports = collect_submodules("jax", filter=lambda name: ".tests" not in name)
datas = copy_metadata("jax") + copy_metadata("jaxlib")
module_collection_mode = "pyz+py"
