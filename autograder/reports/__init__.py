"""What grading writes: grades.csv / report.json (atomic, resumable, merged), the class report, shards."""
