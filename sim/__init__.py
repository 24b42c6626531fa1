"""The shared discrete-event simulator and what sits on it: event core, batch machine,
availability profile, metrics, validation; the CLI and batch runner on top."""
