"""A griffe extension (mkdocs.yml): the package's docstrings are plain text, where a listing
of aligned columns ("HanabiConfig   the variant ...") or a heading line followed by indented
lines ("Args:" and its entries) is laid out by its spaces. Markdown would run such lines
together into one paragraph; here each becomes a code block, as it reads in the source."""

import re

import griffe

COLUMNS = re.compile(r"\S {3,}\S")


def _is_listing(lines):
    if len(lines) < 2 or lines[0].startswith("    "):
        return False
    heading = lines[0].rstrip().endswith(":") and all(line.startswith(" ") for line in lines[1:])
    return heading or COLUMNS.search(lines[0]) is not None


def as_markdown(text):
    paragraphs = [paragraph.splitlines() for paragraph in text.split("\n\n")]
    return "\n\n".join("\n".join("    " + line for line in lines) if _is_listing(lines)
                       else "\n".join(lines) for lines in paragraphs)


class PlainTextDocstrings(griffe.Extension):
    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = as_markdown(obj.docstring.value)
