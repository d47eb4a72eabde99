# optimistix: its submodules and sources (read by inspect), and its version metadata.
from PyInstaller.utils.hooks import collect_submodules, copy_metadata

hiddenimports = collect_submodules("optimistix")
datas = copy_metadata("optimistix")
module_collection_mode = "pyz+py"
