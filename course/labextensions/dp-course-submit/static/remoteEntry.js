/* dp-course-submit: nbgrader's Assignments panel hands in what is on screen (issue 28).
 *
 * nbgrader's Submit and Validate buttons in JupyterLab's Assignments panel act on the saved
 * files: an edited, unsaved notebook was submitted stale, with no warning. This plugin listens
 * for clicks on those buttons (capture phase, before nbgrader's own handler), saves the
 * assignment's open notebooks that have unsaved changes, then lets the click through; when one
 * cannot be saved, nothing is submitted and a message says so (Chinese, then English). The
 * panel's "(view feedback)" also opens the feedback pages, not only their folder.
 *
 * A JupyterLab federated extension written by hand, with no build step: this file is the
 * container JupyterLab loads (window._JUPYTERLAB[name] with init/get, as webpack's module
 * federation makes it). It imports no JupyterLab package: documents are found through the
 * application shell (each open document's widget has its `context`: path, dirty flag, save),
 * messages go through JupyterLab's own `apputils:notify` command. nbgrader 0.9.6's panel is
 * matched by its DOM (#fetched_assignments_list, the assignment's link, the button labels):
 * tests/browser/test_lab_grading.py walks it in Chromium and fails when an upgrade changes it.
 *
 * On a student's own computer (python -m course lab, issue 33) there is no exchange and no panel:
 * each assignment notebook (作业/<n>-<assignment>/) gets a 提交 button in its toolbar (and the
 * command "dp-course:submit" in the palette). It saves what is on screen, then asks the course's
 * server extension (course/labserver.py, POST dp-course/submit) to write 提交/<学号>_<assignment>.ipynb,
 * the one file to upload to the LMS; the student id is asked once (the server remembers it) and
 * the notice says where the file is and what to do with it. The Assignments panel's times (UTC
 * with microseconds, as nbgrader's exchange writes them) are shown in the student's time zone.
 */
(function () {
  "use strict";
  var NAME = "dp-course-submit";
  var LABELS = {   // nbgrader's button label: what it does, in Chinese and English
    Submit: { zh: "提交", en: "submit", doing: "submitting", done: "submitted" },
    Validate: { zh: "验证", en: "validate", doing: "validating", done: "validated" }
  };

  /* The assignment a Submit or Validate button of the panel belongs to (its folder's name). */
  function assignmentOf(button) {
    var row = button.closest(".list_item:not(.nested_list_item)");
    var link = row && row.querySelector(".item_name a, .item_name span");
    return link ? link.textContent.trim() : "";
  }

  /* Open documents with unsaved changes inside a folder named `assignment`. */
  function dirtyDocuments(app, assignment) {
    var out = [];
    var widgets = app.shell.widgets("main");
    for (var widget of widgets) {
      var context = widget && widget.context;
      if (!context || !context.model || !context.model.dirty || typeof context.path !== "string") continue;
      var folders = context.path.split("/").slice(0, -1);
      if (folders.indexOf(assignment) >= 0 && out.indexOf(context) < 0) out.push(context);
    }
    return out;
  }

  function notify(app, message, type, autoClose) {
    var close = autoClose === undefined ? (type === "error" ? false : 6000) : (autoClose || false);
    return app.commands
      .execute("apputils:notify", { message: message, type: type, options: { autoClose: close } })
      .catch(function () { window.alert(message); });
  }

  function activate(app) {
    document.addEventListener("click", function (event) {
      var target = event.target;
      var button = target && target.closest ? target.closest("button") : null;
      if (!button || !button.closest("#fetched_assignments_list")) return;
      var label = button.textContent.trim();
      if (!Object.prototype.hasOwnProperty.call(LABELS, label)) return;
      if (button.dataset.dpSaved === "1") {   // our own click, after saving: nbgrader's turn
        delete button.dataset.dpSaved;
        return;
      }
      var assignment = assignmentOf(button);
      if (!assignment) return;
      var dirty = dirtyDocuments(app, assignment);
      if (!dirty.length) return;
      event.preventDefault();
      event.stopImmediatePropagation();
      var names = dirty.map(function (c) { return c.path; }).join(", ");
      Promise.all(dirty.map(function (c) { return c.save(); }))
        .then(function () {
          var left = dirtyDocuments(app, assignment);
          if (left.length) throw new Error(left.map(function (c) { return c.path; }).join(", ") + " still unsaved");
          var say = LABELS[label];
          notify(app, "已保存 " + names + "，正在" + say.zh + " / saved " + names + ", now " + say.doing, "info");
          button.dataset.dpSaved = "1";
          button.click();
        })
        .catch(function (error) {
          var say = LABELS[label];
          notify(app, "未" + say.zh + "：" + names + " 未能保存（" + error + "）。请先保存（Ctrl+S）再" + say.zh +
                 "。 / Not " + say.done + ": " + names + " could not be saved (" + error + "). Save (Ctrl+S), then " +
                 say.en + ".", "error");
        });
    }, true);
  }

  /* "(view feedback)" in the panel only moved the file browser to the feedback folder: open the
   * feedback pages in it too (JupyterLab's HTML viewer; the pages have no script). The folder is
   * the one nbgrader's own handler goes to (its filebrowser:go-to-path command, seen executed). */
  function openFeedbackPages(app) {
    var clicked = 0;
    document.addEventListener("click", function (event) {
      var link = event.target && event.target.closest ? event.target.closest("a") : null;
      if (link && link.closest("#submitted_assignments_list") && /view feedback/.test(link.textContent)) {
        clicked = Date.now();
      }
    }, true);
    app.commands.commandExecuted.connect(function (_, executed) {
      if (executed.id !== "filebrowser:go-to-path" || Date.now() - clicked > 5000) return;
      clicked = 0;
      var folder = executed.args && executed.args.path;
      if (typeof folder !== "string") return;
      Promise.resolve(executed.result)
        .then(function () { return app.serviceManager.contents.get(folder, { content: true }); })
        .then(function (model) {
          (model.content || []).filter(function (item) { return item.type === "file" && /\.html$/.test(item.name); })
            .forEach(function (item) {
              app.commands.execute("docmanager:open", { path: item.path, factory: "HTML Viewer" });
            });
        })
        .catch(function (error) { console.error("dp-course-submit: feedback pages of " + folder, error); });
    });
  }

  var ASSIGNMENTS_DIR = "作业/";

  function xsrfToken() {
    var match = document.cookie.match("\\b_xsrf=([^;]*)\\b");
    return match ? match[1] : "";
  }

  /* POST dp-course/submit as JupyterLab's own requests are made (token, XSRF cookie). */
  function postSubmit(app, body) {
    var settings = app.serviceManager.serverSettings;
    var headers = { "Content-Type": "application/json", "X-XSRFToken": xsrfToken() };
    if (settings.token) headers.Authorization = "token " + settings.token;
    var url = settings.baseUrl.replace(/\/?$/, "/") + "dp-course/submit";
    return window.fetch(url, { method: "POST", headers: headers, body: JSON.stringify(body), credentials: "same-origin" })
      .then(function (response) {
        return response.json().catch(function () { return { message: "HTTP " + response.status }; })
          .then(function (answer) { return { status: response.status, answer: answer }; });
      });
  }

  /* 提交: save the notebook on screen, then have the server write the upload file. */
  function submitNotebook(app, context) {
    var path = context.path;
    var save = context.model && context.model.dirty ? context.save() : Promise.resolve();
    return save
      .then(function () {
        if (context.model && context.model.dirty) throw new Error(path + " still unsaved");
        return postSubmit(app, { path: path });
      })
      .then(function (reply) {
        if (reply.status === 409 && reply.answer.need_student_id) {
          var id = window.prompt(reply.answer.message, "");
          if (id === null || !id.trim()) throw new Error("没有学号，未提交 / no student id, nothing submitted");
          return postSubmit(app, { path: path, student_id: id.trim() });
        }
        return reply;
      })
      .then(function (reply) {
        if (reply.status !== 200) throw new Error(reply.answer.message || "HTTP " + reply.status);
        notify(app, reply.answer.short, "success", 0);
        console.info("dp-course-submit: " + reply.answer.notice);
        // the file browser shows the new file (right-click ▸ Download gives a copy too)
        app.commands.execute("filebrowser:go-to-path", { path: reply.answer.folder + "/" }).catch(function () {});
        return reply.answer;
      })
      .catch(function (error) {
        notify(app, "未提交 / Not submitted: " + (error && error.message ? error.message : error), "error");
      });
  }

  function currentContext(app) {
    var widget = app.shell.currentWidget;
    var context = widget && widget.context;
    return context && typeof context.path === "string" && context.path.indexOf(ASSIGNMENTS_DIR) === 0 &&
      /\.ipynb$/.test(context.path) ? context : null;
  }

  function addSubmitButton(app) {
    app.commands.addCommand("dp-course:submit", {
      label: "提交作业（生成要上传的文件）/ Submit (the file to upload)",
      isEnabled: function () { return !!currentContext(app); },
      execute: function () {
        var context = currentContext(app);
        return context ? submitNotebook(app, context) : null;
      }
    });
    if (app.docRegistry && app.docRegistry.addWidgetExtension) {
      app.docRegistry.addWidgetExtension("Notebook", {
        createNew: function (panel, context) {
          if (context.path.indexOf(ASSIGNMENTS_DIR) !== 0 || !panel.toolbar) return;
          var button = document.createElement("button");
          button.className = "jp-Button jp-mod-styled jp-mod-accept dp-course-submit";
          button.textContent = "提交";
          button.title = "保存并生成要上传到课程平台的文件 / Save and write the file to upload";
          button.style.margin = "0 4px";
          button.addEventListener("click", function () { submitNotebook(app, context); });
          panel.toolbar.node.insertBefore(button, panel.toolbar.node.firstChild);
        }
      });
    }
  }

  /* nbgrader's panel shows submission times as its exchange writes them, in UTC with microseconds
   * ("2026-11-29 03:21:08.279812 UTC"), while JupyterLab shows local times: the panel's times are
   * shown in the student's own time zone, to the second, with the offset ("2026-11-29 11:21:08
   * (UTC+08:00)"). Only the text is changed: nbgrader finds feedback by its own data, not the text. */
  var PANELS = "#submitted_assignments_list, #fetched_assignments_list, #released_assignments_list";
  var UTC_TIME = /(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.\d+)? ?(?:UTC|\+00:00|Z)\b/g;

  function two(n) { return (n < 10 ? "0" : "") + n; }

  function localTime(match, y, mo, d, h, mi, s) {
    var t = new Date(Date.UTC(+y, +mo - 1, +d, +h, +mi, +s));
    var off = -t.getTimezoneOffset();
    var sign = off >= 0 ? "+" : "-";
    off = Math.abs(off);
    return t.getFullYear() + "-" + two(t.getMonth() + 1) + "-" + two(t.getDate()) + " " + two(t.getHours()) + ":" +
      two(t.getMinutes()) + ":" + two(t.getSeconds()) + " (UTC" + sign + two(Math.floor(off / 60)) + ":" + two(off % 60) + ")";
  }

  function localizeTimes(element) {
    var walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      var text = node.nodeValue;
      var changed = text.replace(UTC_TIME, localTime);
      if (changed !== text) node.nodeValue = changed;   // no match after the change: no loop
    }
  }

  function showLocalTimes() {
    new MutationObserver(function (records) {
      records.forEach(function (record) {
        var element = record.target.nodeType === 1 ? record.target : record.target.parentElement;
        var panel = element && element.closest ? element.closest(PANELS) : null;
        if (panel) localizeTimes(panel);
      });
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
  }

  var plugin = {
    id: NAME + ":plugin",
    description: "Save the assignment's open notebooks before nbgrader's Submit and Validate.",
    autoStart: true,
    activate: function (app) {
      activate(app);
      openFeedbackPages(app);
      addSubmitButton(app);
      showLocalTimes();
    }
  };

  window._JUPYTERLAB = window._JUPYTERLAB || {};
  window._JUPYTERLAB[NAME] = {
    init: function () { return Promise.resolve(); },
    get: function (module) {
      if (module === "./extension") {
        return Promise.resolve(function () { return { __esModule: true, "default": [plugin] }; });
      }
      return Promise.reject(new Error(NAME + " has no module " + module));
    }
  };
})();
