"""Context switchers: moving stalled warps/CTAs out to spare on-chip storage."""
