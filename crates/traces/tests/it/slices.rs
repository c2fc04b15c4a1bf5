use std::path::PathBuf;
use traces::{Format, SizeSource};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data").join(name)
}

#[test]
fn swf_slices_read_every_job_line() {
    for (file, jobs, units) in [
        ("KTH-SP2-1996-2.1-cln.first3000.swf.gz", 3000, 100),
        ("CTC-SP2-1996-3.1-cln.first2000.swf.gz", 2000, 338),
        ("HPC2N-2002-2.2-cln.first2000.swf.gz", 2000, 240),
        ("LANL-CM5-1994-4.1-cln.first2000.swf.gz", 2000, 1024),
        ("SDSC-BLUE-2000-4.2-cln.first2000.swf.gz", 2000, 1152),
        ("CEA-Curie-2011-2.1-cln.first2000.swf.gz", 2000, 93312),
    ] {
        let w = traces::load(&data(file), None, None).unwrap();
        assert_eq!(w.format, Format::Swf);
        assert_eq!(w.jobs.len(), jobs, "{file}");
        assert_eq!(w.units, units, "{file}");
        assert_eq!(w.size_source, SizeSource::MaxProcs);
        assert_eq!(w.checksum.len(), 64);
        assert!(w.header.iter().any(|h| h.starts_with("Version")));
    }
}

#[test]
fn swf_conventions() {
    // CTC has no requested processors: allocated ones are used.
    let w = traces::load(&data("CTC-SP2-1996-3.1-cln.first2000.swf.gz"), None, None).unwrap();
    assert!(w.jobs.iter().all(|j| j.tasks > 0));
    // SDSC-BLUE has cancelled jobs with run time -1: kept, with no run time.
    let w = traces::load(&data("SDSC-BLUE-2000-4.2-cln.first2000.swf.gz"), None, None).unwrap();
    assert!(w.jobs.iter().any(|j| j.runtime.is_none()));
    // --procs overrides the header.
    let w = traces::load(&data("KTH-SP2-1996-2.1-cln.first3000.swf.gz"), None, Some(64)).unwrap();
    assert_eq!((w.units, w.size_source), (64, SizeSource::Override));
}

#[test]
fn batsim_workload() {
    let w = traces::load(&data("batsim-medium_late.json"), None, None).unwrap();
    assert_eq!(w.format, Format::Batsim);
    assert_eq!((w.jobs.len(), w.units), (801, 32));
    assert_eq!(w.jobs[0].trace_id, "424242");
    assert_eq!(w.jobs[0].submit.0, 16_000_000_000);
    // The same bytes are read identically as SWF-forced would fail: format detection matters.
    assert!(traces::load(&data("batsim-medium_late.json"), Some(Format::Swf), None).is_err());
}

#[test]
fn same_file_same_checksum() {
    let a = traces::load(&data("HPC2N-2002-2.2-cln.first2000.swf.gz"), None, None).unwrap();
    let b = traces::load(&data("HPC2N-2002-2.2-cln.first2000.swf.gz"), None, None).unwrap();
    assert_eq!(a.checksum, b.checksum);
    assert_eq!(a.jobs, b.jobs);
}
