//! The kinds of background work. Each is a row in `jobs` written in the same transaction
//! as what it works on; the kind's name is what the row stores.

/// What a job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    /// Reads a record's material (transcribes a recording) and makes it ready.
    ProcessRecord,
    /// Writes a record's persona.
    WritePersona,
    /// Generates a report; its row is written with the report.
    GenerateReport,
    /// Suggests highlights on a record; its subject is the suggestion request.
    SuggestHighlights,
    /// Groups a project's untagged highlights into proposed themes; its subject is the
    /// project.
    ProposeThemes,
}

impl JobKind {
    pub const ALL: [Self; 5] = [
        Self::ProcessRecord,
        Self::WritePersona,
        Self::GenerateReport,
        Self::SuggestHighlights,
        Self::ProposeThemes,
    ];

    /// The name stored in `jobs.kind`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ProcessRecord => "record.process",
            Self::WritePersona => "persona.write",
            Self::GenerateReport => "report.generate",
            Self::SuggestHighlights => "highlights.suggest",
            Self::ProposeThemes => "highlights.themes",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

impl std::fmt::Display for JobKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl TryFrom<String> for JobKind {
    type Error = String;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        Self::parse(&name).ok_or_else(|| format!("no job kind is named {name}"))
    }
}

#[cfg(test)]
mod tests {
    use super::JobKind;

    #[test]
    fn each_kind_reads_back_from_its_stored_name() {
        for kind in JobKind::ALL {
            assert_eq!(JobKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(JobKind::parse("no.such.kind"), None);
    }
}
