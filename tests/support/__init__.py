"""What the tests share: the corpus (``corpus``), running notebooks and their graded cells
(``notebooks``), the servers (``servers``, ``labserver``, ``hubserver``), the class report's
cross-checks (``classreport``, ``report_bench``)."""
