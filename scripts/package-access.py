#!/usr/bin/env python3
"""Adds `package` to every declaration without an access modifier at type or file scope (not inside function
bodies, closures or protocols) in the given Swift files, so that a lower target's internals stay visible to the
package's other targets (issue 14). Used on Sources/FlipbookCore and Sources/FlipbookCodecs; re-run it on a file
merged from a branch that predates the split. Idempotent. Prints the number of declarations changed."""
import re, sys

DECL = re.compile(r'^(\s*)((?:@\w+(?:\([^)]*\))?\s+)*)((?:(?:static|final|override|mutating|nonmutating|lazy|convenience|required|indirect|nonisolated|class|weak|unowned|dynamic|public|package|internal|private|fileprivate|open)(?:\(set\))?\s+)*)(func|var|let|init|subscript|struct|class|enum|typealias|protocol|actor|extension|case|deinit|associatedtype)\b')
TYPE = re.compile(r'^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|open|final|indirect)\s+)*(struct|class|enum|extension|protocol|actor)\b')
ACCESS = re.compile(r'\b(public|package|internal|private|fileprivate|open)\b(?!\(set\))')

def process(text):
    out_lines = []
    stack = []  # 'type', 'protocol', 'other'
    changed = 0
    head = ''
    in_block_comment = False
    in_string = False
    multi = False
    for line in text.split('\n'):
        ctx = stack[-1] if stack else 'top'
        m = DECL.match(line)
        if m and not in_block_comment and not in_string and ctx in ('top', 'type'):
            kw = m.group(4)
            mods = m.group(3)
            if kw not in ('extension', 'case', 'deinit', 'associatedtype') and not ACCESS.search(mods):
                # `class` as a modifier (class func/var) is fine; `class Foo` is a declaration too.
                line = line[:m.start(2)] + m.group(2) + 'package ' + line[m.start(3):]
                changed += 1
        out_lines.append(line)
        # scan characters for braces
        i = 0
        n = len(line)
        while i < n:
            c = line[i]
            if in_block_comment:
                if line.startswith('*/', i): in_block_comment = False; i += 2; continue
                i += 1; continue
            if in_string:
                if multi:
                    if line.startswith('"""', i): in_string = False; multi = False; i += 3; continue
                else:
                    if c == '\\': i += 2; continue
                    if c == '"': in_string = False; i += 1; continue
                head += ' '
                i += 1; continue
            if line.startswith('//', i): break
            if line.startswith('/*', i): in_block_comment = True; i += 2; continue
            if line.startswith('"""', i): in_string = True; multi = True; i += 3; continue
            if c == '"': in_string = True; i += 1; continue
            if c == '{':
                lines = head.split('\n')
                kind = 'other'
                for l in reversed(lines):
                    if DECL.match(l) or TYPE.match(l):
                        t = TYPE.match(l)
                        if t: kind = 'protocol' if t.group(1) == 'protocol' else 'type'
                        break
                stack.append(kind)
                head = ''
            elif c == '}':
                if stack: stack.pop()
                head = ''
            elif c == ';':
                head = ''
            else:
                head += c
            i += 1
        if in_string and not multi:
            in_string = False
        head += '\n'
    return '\n'.join(out_lines), changed

total = 0
for path in sys.argv[1:]:
    text = open(path).read()
    new, changed = process(text)
    if changed:
        open(path, 'w').write(new)
    total += changed
print(total)
