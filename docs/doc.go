// Package docs holds Toolbelt's manual, one Markdown file per subject. Its
// tests run every console example of the manual and of the README, and
// check that every Go snippet is an excerpt of code in the repository.
package docs
