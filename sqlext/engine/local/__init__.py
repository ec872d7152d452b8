"""Small statements without a Spark job: rows evaluated by Spark over local relations on the
driver, files read and written with pyarrow (issue 30)."""
