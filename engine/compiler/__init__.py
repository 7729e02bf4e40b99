"""The rule compiler: rules to Python dispatch code, generated at build time or cached."""
