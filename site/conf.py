"""Sphinx settings of the chapter's site, built by `make chapter` (tools/chapter.py build).

tools/chapter.py copies this folder into a fresh source folder next to freshly executed
copies of the notebooks and an index.md it writes, and adds to assets/ MathJax 3 from
node_modules and the Colab badge. It sets ``project`` and the repository address and
branch from pyproject.toml with ``-D`` overrides, so nothing here names the repository.
"""

project = "the chapter"  # replaced by [tool.chapter] title of pyproject.toml
html_title = project
author = "the chapter's authors"
language = "en"

extensions = ["myst_nb"]
exclude_patterns = ["assets", "templates", "**.ipynb_checkpoints"]

# Pages come from the outputs stored in the executed copies; Sphinx never runs a notebook.
nb_execution_mode = "off"
# No ipywidgets scripts (they come from a CDN): tools/chapter.py replaces each widget's output
# with its browser version (site/widgets/, tools/widgets.py) or a note.
nb_ipywidgets_js = {}
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_dmath_double_inline = True  # $$...$$ inside a paragraph is displayed math
myst_heading_anchors = 3

# assets/: chapter.css from here, MathJax 3 from npm (tools/chapter.py copies it in). A
# folder named _static would make Sphinx load every MathJax file as a script.
html_static_path = ["assets"]
html_css_files = ["chapter.css"]
mathjax_path = "mathjax/tex-chtml.js"

html_theme = "sphinx_book_theme"
templates_path = ["templates"]  # the theme's search button with an accessible name
html_copy_source = True  # the .ipynb behind the download button
html_show_sourcelink = False
html_show_search_summary = False  # it fetch()es each page: refused from file://
html_theme_options = {
    "repository_url": "",  # set by tools/chapter.py from pyproject.toml
    "repository_branch": "",
    "path_to_docs": "",
    "launch_buttons": {"colab_url": "https://colab.research.google.com"},
    "use_download_button": True,
    "use_fullscreen_button": False,
    "show_toc_level": 2,
    "home_page_in_toc": True,
    # No header bar: sphinx-book-theme leaves it empty, but pydata-sphinx-theme 0.20 fills an
    # unset navbar_persistent with a search button, and the header that holds it also holds
    # hidden copies of the sidebar toggles. The themes' scripts bind the first
    # .primary-toggle/.secondary-toggle on the page: with the header, those hidden copies,
    # so the visible menu buttons did nothing at any width.
    "navbar_persistent": [],
}
