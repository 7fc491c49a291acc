"""The run's plumbing, around the analysis: which files (:mod:`.discovery`),
which of them are worth a parse (:mod:`.prefilter`, in rounds driven by
:mod:`.gather`), their facts from the cache (:mod:`.cache`) or the worker
processes (:mod:`.workers`), and one run from the command line's paths to a
``CheckResult`` (:mod:`.run`).  :mod:`cslint.api` is its facade."""
