# Checks the CI jobs that File > Export for CI writes, as GitLab and GitHub read them: valid
# YAML, each job installing the packages, running the one script and publishing the JUnit
# report. Usage: check_ci_jobs.py FOLDER (prints "yaml ok").
import sys, yaml
gitlab = yaml.safe_load(open(sys.argv[1] + "/.gitlab-ci.yml"))
job = gitlab["tessel-project"]
assert "sh ci/run-project.sh" in job["script"], job
assert any("tessel-packages/*.deb" in line for line in job["script"]), job
assert job["artifacts"]["reports"]["junit"] == "tessel-report.xml", job
assert job["artifacts"]["when"] == "always", job
github = yaml.safe_load(open(sys.argv[1] + "/.github/workflows/tessel.yml"))
steps = github["jobs"]["tessel-project"]["steps"]
runs = [step.get("run", "") for step in steps]
assert "sh ci/run-project.sh" in runs, runs
assert any("tessel-packages/*.deb" in run for run in runs), runs
reports = [step for step in steps if "junit" in step.get("uses", "")]
assert reports and reports[0]["with"]["report_paths"] == "tessel-report.xml", steps
assert reports[0]["if"] == "always()", reports
print("yaml ok")
