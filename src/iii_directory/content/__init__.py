"""Files on disk: ids, frontmatter, roots, and the skills / prompts / agents scans."""
