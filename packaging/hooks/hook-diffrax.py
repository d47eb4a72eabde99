# diffrax: its submodules and sources (read by inspect), and its version metadata.
from PyInstaller.utils.hooks import collect_submodules, copy_metadata

hiddenimports = collect_submodules("diffrax")
datas = copy_metadata("diffrax")
module_collection_mode = "pyz+py"
