"""Ids the grader itself assigns to a failure no check named (``autograder/scorer.py``
``diagnosis_of``, the class report's ``common.not_run``)."""

from __future__ import annotations

from helpers.checks.diagnoses.entry import Diagnosis

_D = Diagnosis

#: Ids the grader gives a failure that no check named (``autograder/scorer.py`` ``diagnosis_of``,
#: the class report); listed here so that the guide explains every id a class report can show.
GRADER_DIAGNOSES: dict[str, Diagnosis] = {
    "common.function_missing": _D(
        "测试调用的函数没有定义（NameError）：函数名拼错，或定义它的单元格没有运行、报错了。",
        "检查函数名是否与题目完全一致，然后 Restart Kernel and Run All 确认所有单元格都能运行。",
        "A graded function is not defined (NameError): misspelt, or its cell failed.",
        "Check the name and run all cells from a fresh kernel."),
    "common.sandbox_failed": _D(
        "学生代码所在的进程在评分时退出或被终止（超出内存、CPU 时间或进程数上限）。",
        "检查是否生成了过大的数组、无限递归或死循环；在自己的电脑上用评分时的参数运行一次并观察内存。",
        "The student's process died or was killed while graded (memory, CPU time or process limit).",
        "Look for huge arrays, endless recursion or loops."),
    "common.not_run": _D(
        "这个测试单元格没有运行（没有找到笔记本，或评分在它之前就停止了）。",
        "查看反馈中的错误信息：常见原因是提交的文件名不对或笔记本无法打开。",
        "The test cell did not run (no notebook, or grading stopped before it).",
        "Read the feedback's error: often a wrong file name or an unreadable notebook."),
}
