"""Build the documentation site as CI does (`mkdocs build --strict`) and print its figures:
pages, API objects documented, warnings. tests/repo/test_docs_site.py runs `build` too.

    python docs/site/build_site.py [--out DIR]      (default: a temporary folder)
"""

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
API_MODULES = ("engine", "envs", "wrappers", "agents", "search", "eval", "train")
OBJECT = re.compile(r'<div class="doc doc-object ')


def build(out):
    """Build the site into `out`; its figures, and mkdocs' log."""
    out = pathlib.Path(out)
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True)
    log = done.stdout + done.stderr
    objects = {module: len(OBJECT.findall(page.read_text()))
               for module in API_MODULES
               if (page := out / "api" / module / "index.html").is_file()}
    return {"returncode": done.returncode,
            "pages": len(list(out.rglob("index.html"))),
            "api_objects": objects,
            "warnings": [line for line in log.splitlines()
                         if line.startswith(("WARNING", "ERROR"))],
            "log": log}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="the site's folder (default: a temporary one)")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="lbs_pz_site_")
    figures = build(out)
    print(f"site: {out}\npages: {figures['pages']}\n"
          f"API objects documented: {sum(figures['api_objects'].values())} "
          f"({', '.join(f'{k} {v}' for k, v in figures['api_objects'].items())})\n"
          f"warnings: {len(figures['warnings'])}")
    print("\n".join(figures["warnings"]))
    return figures["returncode"]


if __name__ == "__main__":
    sys.exit(main())
