# difflab: command modules named by string (imported on use), model plugins found through
# package metadata, and the desktop files.
from PyInstaller.utils.hooks import collect_data_files, collect_submodules, copy_metadata

hiddenimports = collect_submodules("difflab")
datas = copy_metadata("difflab") + collect_data_files("difflab")
