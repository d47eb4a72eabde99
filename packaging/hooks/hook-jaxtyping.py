# jaxtyping: its submodules and sources (read by inspect), and its version metadata.
from PyInstaller.utils.hooks import collect_submodules, copy_metadata

hiddenimports = collect_submodules("jaxtyping")
datas = copy_metadata("jaxtyping")
module_collection_mode = "pyz+py"
