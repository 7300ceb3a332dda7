//! CSV tables: a header row naming every column, then one row per record.

use crate::ReportError;
use std::path::Path;

/// Writes `rows` under `header` as CSV to `path`. Every row must have `header.len()` entries.
/// Numbers are written with Rust's shortest round-trip formatting.
pub fn write_csv(path: &Path, header: &[String], rows: &[Vec<f64>]) -> Result<(), ReportError> {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|x| format!("{x}")).collect())
        .collect();
    write_csv_cells(path, header, &cells)
}

/// Writes rows of already formatted cells (numbers and words, e.g. a label column) under
/// `header` as CSV to `path` (the `csv` crate: cells holding commas, quotes or line breaks are
/// quoted). Every row must have `header.len()` entries.
pub fn write_csv_cells(
    path: &Path,
    header: &[String],
    rows: &[Vec<String>],
) -> Result<(), ReportError> {
    for (i, row) in rows.iter().enumerate() {
        if row.len() != header.len() {
            return Err(ReportError::Io {
                path: path.display().to_string(),
                message: format!(
                    "row {i} has {} values but the header has {} columns",
                    row.len(),
                    header.len()
                ),
            });
        }
    }
    let csv_error = |e: csv::Error| ReportError::io(path, e);
    let mut out = csv::Writer::from_path(path).map_err(csv_error)?;
    out.write_record(header).map_err(csv_error)?;
    for row in rows {
        out.write_record(row).map_err(csv_error)?;
    }
    out.flush().map_err(|e| ReportError::io(path, e))
}

/// Writes `value` as pretty JSON to `path`.
pub fn write_json<S: serde::Serialize>(path: &Path, value: &S) -> Result<(), ReportError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| ReportError::io(path, e))?;
    std::fs::write(path, text).map_err(|e| ReportError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_round_trips_numbers_and_rejects_ragged_rows() {
        let dir = std::env::temp_dir().join(format!("nonsmooth-table-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        let header = vec!["t".to_string(), "x".to_string()];
        write_csv(&path, &header, &[vec![0.0, 1.5], vec![0.1, -2.25e-7]]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "t,x");
        let parsed: Vec<f64> = lines[2].split(',').map(|s| s.parse().unwrap()).collect();
        assert_eq!(parsed, vec![0.1, -2.25e-7]);
        assert!(write_csv(&path, &header, &[vec![1.0]]).is_err());
        // a label with a comma is quoted and reads back whole
        let labels = vec![vec!["a, b".to_string(), "1".to_string()]];
        write_csv_cells(&path, &header, &labels).unwrap();
        let mut reader = csv::Reader::from_path(&path).unwrap();
        let row = reader.records().next().unwrap().unwrap();
        assert_eq!(&row[0], "a, b");
    }
}
