#!/usr/bin/env python3
"""Rewrites test sources from the old compile-time folders (HR_SOURCE_DIR, HR_BINARY_DIR, HR_FAKE_NVML
string macros) to the run-time ones of tests/support/test_support.h (hrtest::source_path and friends).

Usage: tests/support/convert_paths.py FILE...   (rewrites in place; prints what is left to do by hand)
For a branch written against the old macros: run it on the tests it adds, then build them.
"""
import re
import sys

FAKE_NVML = 'tests/libfake-nvidia-ml.so'  # tests/CMakeLists.txt puts fake_nvml there
RULES = [
    # QStringLiteral(HR_BINARY_DIR "/headroom") -> hrtest::qbinary_path("headroom")
    (r'(?:QStringLiteral|QString)\(\s*HR_(SOURCE|BINARY)_DIR\s*"/([^"]*)"\s*\)',
     lambda m: f'hrtest::q{m[1].lower()}_path("{m[2]}")'),
    (r'(?:QStringLiteral|QString)\(\s*HR_(SOURCE|BINARY)_DIR\s*\)', lambda m: f'hrtest::q{m[1].lower()}_path()'),
    # std::string(HR_BINARY_DIR) + "/headroom" -> hrtest::binary_path("headroom")
    (r'std::string\(\s*HR_(SOURCE|BINARY)_DIR\s*\)\s*\+\s*"/([^"]*)"',
     lambda m: f'hrtest::{m[1].lower()}_path("{m[2]}")'),
    (r'std::string\(\s*HR_(SOURCE|BINARY)_DIR\s*\)', lambda m: f'hrtest::{m[1].lower()}_dir()'),
    (r'std::filesystem::path\(\s*HR_(SOURCE|BINARY)_DIR\s*\)',
     lambda m: f'std::filesystem::path(hrtest::{m[1].lower()}_dir())'),
    # "text:" HR_SOURCE_DIR "/README.md" -> "text:" + hrtest::source_path("README.md")
    (r'"([^"]*)"\s+HR_(SOURCE|BINARY)_DIR\s*"/([^"]*)"',
     lambda m: f'"{m[1]}" + hrtest::{m[2].lower()}_path("{m[3]}")'),
    # HR_SOURCE_DIR "/x" anywhere else: a std::string
    (r'HR_(SOURCE|BINARY)_DIR\s*"/([^"]*)"', lambda m: f'hrtest::{m[1].lower()}_path("{m[2]}")'),
    (r'QStringLiteral\(\s*HR_FAKE_NVML\s*\)', lambda m: f'hrtest::qbinary_path("{FAKE_NVML}")'),
    (r'dlopen\(\s*HR_FAKE_NVML\s*,', lambda m: f'dlopen(hrtest::binary_path("{FAKE_NVML}").c_str(),'),
    (r'HR_FAKE_NVML', lambda m: f'hrtest::binary_path("{FAKE_NVML}")'),
]


def convert(path):
    text = open(path, encoding='utf-8').read()
    new = text
    for pattern, repl in RULES:
        new = re.sub(pattern, repl, new)
    if new != text and 'test_support.h"' not in new:
        # after the first block of #include lines
        lines = new.split('\n')
        first = next(i for i, l in enumerate(lines) if l.startswith('#include'))
        last = first
        while last + 1 < len(lines) and lines[last + 1].startswith('#include'):
            last += 1
        lines.insert(last + 1, '#include "test_support.h"')
        new = '\n'.join(lines)
    if new != text:
        open(path, 'w', encoding='utf-8').write(new)
    for n, line in enumerate(new.split('\n'), 1):
        if re.search(r'\bHR_(SOURCE_DIR|BINARY_DIR|FAKE_NVML)\b', line):
            print(f'{path}:{n}: left for a hand: {line.strip()}')


for p in sys.argv[1:]:
    if not p.endswith(('test_support.h', 'convert_paths.py')):
        convert(p)
