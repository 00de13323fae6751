from mtcb_curate.cli import main

raise SystemExit(main())
