#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check-docs.py FILE.rst...: parse kernel RST with docutils, fail on any
warning. Sphinx-only markup (kernel-doc directives, :doc: and :c:func:
roles) is accepted without being rendered; the kernel-doc comments
themselves are checked by scripts/kernel-doc from the kernel tree."""
import sys

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, directives, roles


class KernelDoc(Directive):
    required_arguments = 1
    option_spec = {'export': directives.unchanged,
                   'internal': directives.unchanged,
                   'identifiers': directives.unchanged,
                   'doc': directives.unchanged}

    def run(self):
        return []


def sphinx_role(name, rawtext, text, lineno, inliner, options=None,
                content=None):
    return [nodes.literal(rawtext, text)], []


directives.register_directive('kernel-doc', KernelDoc)
for role in ('doc', 'ref', 'c:func', 'c:type', 'c:macro'):
    roles.register_local_role(role, sphinx_role)

bad = 0
for path in sys.argv[1:]:
    with open(path) as f:
        try:
            publish_doctree(f.read(), source_path=path,
                            settings_overrides={'halt_level': 2,
                                                'report_level': 2})
            print(f'ok {path}')
        except Exception as e:  # docutils raises SystemMessage
            print(f'FAIL {path}: {e}')
            bad += 1
sys.exit(1 if bad else 0)
