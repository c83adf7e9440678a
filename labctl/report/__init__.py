"""Reports for quality teams: exporters are callables that take run records.

    from labctl.report.record import load_records, measurements_frame   # the run record, the table
    from labctl.report.formats import FORMATS, export                   # format name -> exporter

See docs/reports.md. Importing this package imports nothing heavy.
"""
