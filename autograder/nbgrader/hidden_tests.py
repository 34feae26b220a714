"""nbgrader's ``GenerateFeedback`` preprocessor that removes the hidden tests (nbgrader issue #917).

Here, among the nbgrader adapters, and not in :mod:`autograder.render.feedback`, whose functions it
uses: every grading worker imports that module, and importing nbgrader costs a worker 0.6 s of CPU.
"""

from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import List

from autograder.cells import source_text
from autograder.render.feedback import (HIDDEN_FAILED, error_text, failing_line, hidden_spans, note_output,
                                        strip_hidden)


class StripHiddenTests(NbGraderPreprocessor):
    """Remove the hidden tests' source *and outputs* from the feedback notebook.

    nbgrader's executed notebook cannot tell which output a hidden block
    printed, so a test cell with a hidden block keeps its outputs only when it
    failed before its first hidden block ran (its traceback's cell line says
    so); otherwise its streams and displays go, and a failure is shown as the
    trusted grader's generic message (a hidden check's message quotes the
    arguments and expected values, e.g. "(-20, -19) ... expected 20"); a
    visible check that failed after a hidden block keeps its own message.
    """

    # nbconvert's HTML exporter sets NbConvertBase.display_data_priority for every preprocessor;
    # nbgrader's base class redeclares the trait without config=True, so each Generate feedback
    # log began with "Config option `display_data_priority` not recognized" (as nbgrader's own
    # GetGrades does, accept it).
    display_data_priority = List(NbGraderPreprocessor.display_data_priority.make_dynamic_default(), config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        original = source_text(cell.source)
        source, found = strip_hidden(original)
        if not found:
            return cell, resources
        cell.source = source
        first_hidden = hidden_spans(original)[0][0]
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        line = failing_line(errors[0].get("traceback")) if errors else None
        if errors and line is not None and line < first_hidden:  # no hidden code ran
            for output in errors:
                output["traceback"] = [error_text(output)]
            return cell, resources
        grade_id = (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id", "?")
        cell.outputs = [note_output("(output of the hidden tests not shown / 隐藏测试的输出不显示)")]
        if errors and line is not None and not any(a <= line <= b for a, b in hidden_spans(original)):
            error = errors[0]  # a visible check after a hidden block failed: its own message
            error["traceback"] = [error_text(error)]
            cell.outputs.append(error)
        elif errors:
            import nbformat

            text = HIDDEN_FAILED.format(grade_id=grade_id)
            cell.outputs.append(nbformat.v4.new_output("error", ename="HiddenTestFailed", evalue=text,
                                                       traceback=[text]))
        return cell, resources
